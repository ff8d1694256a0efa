"""One evaluate per family, the engine an argument: how it is chosen, and what is refused."""

import pytest

from mobeval.api import engine_for, evaluate_nextloc
from mobeval.engines.base import LocalEngine
from mobeval.errors import ConfigError
from tests.conftest import REPO_ROOT

TKY = REPO_ROOT / "data_samples" / "nextloc" / "tky"


def test_the_local_engine_is_the_default_and_an_engine_object_is_used_as_it_is():
    assert isinstance(engine_for(), LocalEngine) and isinstance(engine_for("local"), LocalEngine)
    engine = LocalEngine()
    assert engine_for(engine) is engine
    result = evaluate_nextloc(TKY / "truth.parquet", TKY / "markov.parquet", engine=engine, k=[1])
    assert result.value("acc@1") == evaluate_nextloc(
        TKY / "truth.parquet", TKY / "markov.parquet", k=[1]
    ).value("acc@1")


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"engine": "dask"}, "engine must be one of"),
        ({"partitions": 4}, "partitions= is for the Spark engine"),
        ({"engine": "local", "spark": object()}, "spark= is for the Spark engine"),
        ({"engine": LocalEngine(), "partitions": 2}, "belong to the engine"),
    ],
)
def test_engine_arguments_that_do_not_fit_are_refused_before_reading(arguments, message):
    with pytest.raises(ConfigError, match=message):
        evaluate_nextloc("no-such-truth.parquet", "no-such-predictions.parquet", **arguments)
