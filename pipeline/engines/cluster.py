"""Where the Spark engine runs: the master URL and the Spark settings of a session mobeval starts,
from the command line (``--master URL``, ``--spark-conf KEY=VALUE``, repeatable) or a job file's
``[spark]`` table, the command line's over the file's::

    [spark]
    master = "spark://head:7077"
    conf = { "spark.executor.memory" = "4g", "spark.task.cpus" = 2 }

No PySpark here: the values are checked before any JVM starts (:mod:`mobeval.engines.spark.
session` hands them to ``SparkSession.builder``). A key must be Spark's (``spark.*``): SparkConf
drops any other with a warning only, so ``fs.s3a.endpoint`` is refused here, with its Spark
spelling (``spark.hadoop.fs.s3a.endpoint``) named."""

from __future__ import annotations

from dataclasses import dataclass, field

from mobeval.errors import ConfigError
from mobeval.job_values import shown

#: The job file's ``[spark]`` table: its keys.
SPARK_KEYS = ("master", "conf")


@dataclass(frozen=True)
class SparkSettings:
    """``master``: the master URL (None: Spark's default, ``local[*]`` or spark-submit's);
    ``conf``: Spark settings, key -> value as Spark reads it (a string)."""

    master: str | None = None
    conf: dict[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return self.master is not None or bool(self.conf)

    def over(self, other: SparkSettings) -> SparkSettings:
        """These settings, with ``other``'s (the command line's over a job file's) in front."""
        return SparkSettings(other.master or self.master, {**self.conf, **other.conf})

    def shown(self) -> str:
        """``--master URL --spark-conf K=V ...``: the settings as a message names them."""
        words = [] if self.master is None else [f"--master {self.master}"]
        return " ".join(words + [f"--spark-conf {k}={v}" for k, v in self.conf.items()])


def _checked_key(key: str, where: str) -> str:
    if not key.startswith("spark.") or key == "spark.":
        raise ConfigError(
            f"{where}: {key!r} is not a Spark setting: Spark's keys start with 'spark.' "
            f"(spark.{key}), a Hadoop setting goes as spark.hadoop.{key}"
        )
    return key


def conf_pair(text: str, where: str = "--spark-conf") -> tuple[str, str]:
    """``KEY=VALUE`` (the first ``=`` splits; the value may hold more) as (key, value)."""
    key, equals, value = text.partition("=")
    if not equals or not key.strip():
        raise ConfigError(
            f"{where}: expected KEY=VALUE (e.g. spark.executor.memory=4g), got {text!r}"
        )
    return _checked_key(key.strip(), where), value


def _spark_value(value: object) -> str | None:
    """A TOML value as Spark's text: a string as it is, ``true`` / ``false``, a number's digits;
    None for anything else (a table, an array, a date)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def job_settings(where: str, table: object) -> SparkSettings:
    """A job file's ``[spark]`` table (``where``: the file, for messages) as settings."""
    if not isinstance(table, dict):
        raise ConfigError(f"{where}: spark: expected a table ([spark]), got {shown(table)}")
    unknown = sorted(set(table) - set(SPARK_KEYS))
    if unknown:
        raise ConfigError(
            f"{where}: spark: unknown key {unknown[0]!r}; allowed: {list(SPARK_KEYS)}"
        )
    master = table.get("master")
    if master is not None and not (isinstance(master, str) and master.strip()):
        raise ConfigError(
            f"{where}: spark.master: expected a master URL (a string), got {shown(master)}"
        )
    conf = table.get("conf", {})
    if not isinstance(conf, dict):
        raise ConfigError(
            f'{where}: spark.conf: expected a table of "spark.key" = value, got {shown(conf)}'
        )
    checked = {}
    for key, value in conf.items():
        text = _spark_value(value)
        if text is None:
            raise ConfigError(
                f"{where}: spark.conf.{key}: expected a string, number or boolean, "
                f"got {shown(value)}"
            )
        checked[_checked_key(key, f"{where}: spark.conf")] = text
    return SparkSettings(master, checked)


__all__ = ["SPARK_KEYS", "SparkSettings", "conf_pair", "job_settings"]
