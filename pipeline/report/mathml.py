"""The methods section's formulas as MathML, written here: the HTML report shows them typeset
by the browser itself, with no script and no network.

:func:`tex_to_mathml` reads the subset of LaTeX math the formulas of
:data:`mobeval.report.methods.FAMILIES` use (the conventions below, as data) and refuses any
other command, so a new formula with an unknown command fails the tests instead of showing
raw TeX.
"""

from __future__ import annotations

import html
import re

#: Commands written as one symbol: (MathML element, text).
SYMBOLS = {
    "alpha": ("mi", "α"),
    "beta": ("mi", "β"),
    "gamma": ("mi", "γ"),
    "delta": ("mi", "δ"),
    "lambda": ("mi", "λ"),
    "mu": ("mi", "μ"),
    "sigma": ("mi", "σ"),
    "infty": ("mi", "∞"),
    "le": ("mo", "≤"),
    "leq": ("mo", "≤"),
    "ge": ("mo", "≥"),
    "geq": ("mo", "≥"),
    "ne": ("mo", "≠"),
    "cdot": ("mo", "⋅"),
    "times": ("mo", "×"),
    "in": ("mo", "∈"),
    "lVert": ("mo", "‖"),
    "rVert": ("mo", "‖"),
}
#: Function names: upright, a thin space after.
FUNCTIONS = {"exp", "log", "ln", "min", "max"}
#: Large operators: their limits go under and over them.
LARGE = {"sum": "∑", "prod": "∏"}
#: Spaces: their width.
SPACES = {"quad": "1em", "qquad": "2em", ",": "0.1667em", ":": "0.2222em", ";": "0.2778em"}
#: Commands that size the next delimiter: its height.
SIZES = {"big": "1.2em", "Big": "1.623em", "bigg": "2.047em", "Bigg": "2.470em"}
#: Delimiters: kept at the text's height unless sized (:data:`SIZES`).
FENCES = set("()[]|")
#: Characters written as another in MathML: the real minus sign.
CHARACTERS = {"-": "−"}
#: Commands whose argument is text in a given style: the element and its mathvariant.
STYLED = {"mathrm": "normal", "text": None, "mathbf": "bold", "mathit": "italic"}
#: Characters set with no space around them (``P@k``).
TIGHT = {"@"}
#: Accents over their argument.
ACCENTS = {"hat": "^", "bar": "¯", "tilde": "~"}

_TOKEN = re.compile(r"\\([A-Za-z]+|.)|(\d+(?:\.\d+)?)|(\s+)|(.)")


def _tokens(tex: str) -> list[tuple[str, str]]:
    """(kind, text): ``cmd``, ``num`` or ``chr``, spaces dropped."""
    found = []
    for command, number, space, char in _TOKEN.findall(tex):
        if command:
            found.append(("cmd", command))
        elif number:
            found.append(("num", number))
        elif not space:
            found.append(("chr", char))
    return found


class _Parser:
    def __init__(self, tex: str) -> None:
        self.tex = tex
        self.tokens = _tokens(tex)
        self.at = 0

    def error(self, what: str) -> ValueError:
        return ValueError(f"formula {self.tex!r}: {what}")

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise self.error("ends too early")
        self.at += 1
        return token

    def sequence(self, closing: bool = False) -> str:
        """Atoms up to the end (or to the ``}`` that closes a group), as one ``<mrow>``."""
        items = []
        while (token := self.peek()) is not None:
            if token == ("chr", "}"):
                if not closing:
                    raise self.error("a '}' without its '{'")
                break
            items.append(self.scripted())
        return "<mrow>" + "".join(items) + "</mrow>"

    def group(self) -> str:
        """A ``{...}`` group, or the one atom that stands for it."""
        if self.peek() == ("chr", "{"):
            self.take()
            inner = self.sequence(closing=True)
            if self.take() != ("chr", "}"):
                raise self.error("a '{' without its '}'")
            return inner
        return self.atom()

    def raw(self) -> str:
        """The text of a ``{...}`` group, as written (for ``\\text`` and styles)."""
        if self.take() != ("chr", "{"):
            raise self.error("a style command needs {...}")
        text = []
        while (token := self.take()) != ("chr", "}"):
            text.append(token[1] if token[0] != "cmd" else "\\" + token[1])
        return "".join(text)

    def scripted(self) -> str:
        """An atom with its subscript and superscript, if any."""
        large = self.peek() is not None and self.peek()[0] == "cmd" and self.peek()[1] in LARGE
        base = self.atom()
        sub = sup = None
        while self.peek() in (("chr", "_"), ("chr", "^")):
            mark = self.take()[1]
            if (sub if mark == "_" else sup) is not None:
                raise self.error(f"a second {mark}")
            if mark == "_":
                sub = self.group()
            else:
                sup = self.group()
        if sub is None and sup is None:
            return base
        under, over = ("munder", "mover") if large else ("msub", "msup")
        if sub is not None and sup is not None:
            tag = "munderover" if large else "msubsup"
            return f"<{tag}>{base}{sub}{sup}</{tag}>"
        if sub is not None:
            return f"<{under}>{base}{sub}</{under}>"
        return f"<{over}>{base}{sup}</{over}>"

    def atom(self) -> str:
        kind, text = self.take()
        if kind == "num":
            return f"<mn>{text}</mn>"
        if kind == "chr":
            if text == "{":
                self.at -= 1
                return self.group()
            if text.isalpha():
                return f"<mi>{html.escape(text)}</mi>"
            if text in "_^}":
                raise self.error(f"an unexpected {text!r}")
            if text in TIGHT:
                return f'<mo lspace="0" rspace="0">{html.escape(text)}</mo>'
            if text in FENCES:
                return f'<mo stretchy="false">{html.escape(text)}</mo>'
            return f"<mo>{html.escape(CHARACTERS.get(text, text))}</mo>"
        return self.command(text)

    def command(self, name: str) -> str:
        if name in SYMBOLS:
            element, text = SYMBOLS[name]
            return f"<{element}>{text}</{element}>"
        if name in LARGE:
            return f'<mo largeop="true">{LARGE[name]}</mo>'
        if name in SPACES:
            return f'<mspace width="{SPACES[name]}"/>'
        if name in FUNCTIONS:
            return f'<mi>{name}</mi><mspace width="0.1667em"/>'
        if name in SIZES:
            kind, fence = self.take()
            if kind != "chr" or fence not in FENCES:
                raise self.error(f"\\{name} before {fence!r}, not a delimiter")
            size = SIZES[name]
            return f'<mo stretchy="true" minsize="{size}" maxsize="{size}">{fence}</mo>'

        if name in STYLED:
            text = html.escape(self.raw())
            variant = STYLED[name]
            if variant is None:
                return f"<mtext>{text}</mtext>"
            element = "mn" if text.isdigit() else "mi"
            return f'<{element} mathvariant="{variant}">{text}</{element}>'
        if name == "frac":
            return f"<mfrac>{self.group()}{self.group()}</mfrac>"
        if name == "sqrt":
            return f"<msqrt>{self.group()}</msqrt>"
        if name in ACCENTS:
            return f'<mover accent="true">{self.group()}<mo>{ACCENTS[name]}</mo></mover>'
        raise self.error(f"the command \\{name} is not known (report/mathml.py)")


def tex_to_mathml(tex: str, alttext: str = "") -> str:
    """``tex`` (LaTeX math) as a display ``<math>`` element; ``alttext`` for readers that do not
    render MathML. ValueError on a command outside :data:`SYMBOLS`, :data:`LARGE`,
    :data:`FUNCTIONS`, :data:`SPACES`, :data:`SIZES`, :data:`STYLED`, :data:`ACCENTS`,
    ``\\frac``, ``\\sqrt`` (:data:`TIGHT` characters set without space, :data:`FENCES` at the
    text's height unless sized, a minus as the real minus sign: :data:`CHARACTERS`)."""
    body = _Parser(tex).sequence()
    alt = f' alttext="{html.escape(alttext)}"' if alttext else ""
    return f'<math xmlns="http://www.w3.org/1998/Math/MathML" display="block"{alt}>{body}</math>'
