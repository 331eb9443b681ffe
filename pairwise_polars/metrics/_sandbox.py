"""The Jinja2 sandbox metric templates run in, with every way to allocate much bounded.

Jinja2's own sandbox keeps a template from Python's internals and bounds ``range``; it does not
bound what strings may grow to. Here every operation that makes text longer than its inputs is
checked *before* it runs, against :data:`MAX_TEXT`: products and sums (``*``, ``+``), joins
(``~``, ``|join``), ``%`` formatting and ``str.format`` widths, the padding string methods
(``ljust``, ``rjust``, ``center``, ``zfill``, ``expandtabs``, ``replace``), the filters that pad
(``center``, ``indent``, ``format``, ``replace``, ...) and ``lipsum``. Intercepted operators are
never folded at compile time, so nothing of a template's runs outside the render's error
handling. What a bound refuses is a :class:`~jinja2.exceptions.SecurityError` that says which.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import wraps
from string import Formatter
from typing import Any

from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.nodes import Concat
from jinja2.sandbox import SandboxedEnvironment

MAX_TEXT = 1_000_000
"""The most characters (or items) a product in a template, a padding filter or a whole
rendered prompt may have: far above any judge prompt, far below what exhausts memory."""
_MAX_BITS = 4096
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-+ #0]*(\*|\d+)?(?:\.(\*|\d+))?")
_PADDING_METHODS = frozenset({"ljust", "rjust", "center", "zfill"})
_SIZED_FILTERS = ("center", "wordwrap", "truncate", "format", "indent", "replace", "join")


def _refuse(what: str) -> SecurityError:
    return SecurityError(f"{what} exceeds the limit of {MAX_TEXT:,} characters")


def _too_big(*numbers: Any) -> bool:
    return any(isinstance(n, int) and abs(n) > MAX_TEXT for n in numbers)


def check_percent(template: str, args: Any) -> None:
    """Refuse ``template % args`` when a width or precision (given or ``*``) is too large."""
    values = args if isinstance(args, tuple) else (args,)
    for match in _PERCENT.finditer(template):
        for part in match.groups():
            if part == "*" and _too_big(*values):
                raise _refuse("a '*' width of % formatting")
            if part and part != "*" and int(part) > MAX_TEXT:
                raise _refuse(f"the width {int(part):,} of % formatting")


def check_format(template: str, args: Iterable[Any], kwargs: dict[str, Any]) -> None:
    """Refuse ``template.format(...)`` when a field's width or precision is too large (nested
    fields such as ``{:>{w}}`` resolved first)."""
    for _, _, spec, _ in Formatter().parse(template):
        if not spec:
            continue
        if "{" in spec:
            spec = Formatter().vformat(spec, tuple(args), kwargs)
        if any(int(n) > MAX_TEXT for n in re.findall(r"\d+", spec)):
            raise _refuse(f"the format spec {spec[:20]!r}")


class _Generator(CodeGenerator):
    """``a ~ b`` compiled to the environment's bounded join instead of a plain one."""

    def visit_Concat(self, node: Concat, frame: Frame) -> None:
        self.write("environment.bounded_join((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class BoundedSandbox(SandboxedEnvironment):
    """Jinja2's sandbox with every growth of text bounded (see the module docstring)."""

    intercepted_binops = frozenset({"*", "**", "+", "%"})
    code_generator_class = _Generator

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        for name in _SIZED_FILTERS:
            self.filters[name] = _bounded_filter(name, self.filters[name])
        lipsum = self.globals["lipsum"]

        def bounded_lipsum(n: int = 5, html: bool = True, min: int = 20, max: int = 100) -> str:
            if _too_big(n * max) or n > 1000 or max > 10_000:
                raise _refuse(f"lipsum(n={n}, max={max})")
            return lipsum(n, html, min, max)

        self.globals["lipsum"] = bounded_lipsum

    def bounded_join(self, parts: Iterable[Any]) -> str:
        texts = [str(part) for part in parts]
        if sum(map(len, texts)) > MAX_TEXT:
            raise _refuse("a joined text (~)")
        return "".join(texts)

    def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            for seq, times in ((left, right), (right, left)):
                sized = isinstance(seq, (str, list, tuple)) and isinstance(times, int)
                if sized and len(seq) * times > MAX_TEXT:
                    raise SecurityError(
                        f"a product of {len(seq):,} items by {times:,} exceeds the "
                        f"template limit of {MAX_TEXT:,}"
                    )
        elif operator == "+":
            sized = isinstance(left, (str, list, tuple)) and isinstance(right, (str, list, tuple))
            if sized and len(left) + len(right) > MAX_TEXT:
                raise _refuse("a sum of texts (+)")
        elif operator == "%" and isinstance(left, str):
            check_percent(left, right)
        if operator == "**" and _huge_power(left, right):
            raise SecurityError(f"the power {left} ** {right} is too large for a template")
        return super().call_binop(context, operator, left, right)

    def call(__self, __context: Any, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        owner = getattr(__obj, "__self__", None)
        if isinstance(owner, str):
            _check_str_method(owner, getattr(__obj, "__name__", ""), args, kwargs)
        return super().call(__context, __obj, *args, **kwargs)

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        template = value.__self__
        by_map = value.__name__ == "format_map"

        @wraps(wrapped)
        def bounded(*args: Any, **kwargs: Any) -> str:
            if by_map and len(args) == 1 and isinstance(args[0], dict):
                check_format(template, (), args[0])
            else:
                check_format(template, args, kwargs)
            return wrapped(*args, **kwargs)

        return bounded


def _huge_power(left: Any, right: Any) -> bool:
    if not (isinstance(left, int) and isinstance(right, int)):
        return False
    return abs(left) > 1 and right * left.bit_length() > _MAX_BITS


def _check_str_method(text: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if name in _PADDING_METHODS and _too_big(*args, *kwargs.values()):
        raise _refuse(f"str.{name}'s width")
    if name == "expandtabs":
        size = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(size, int) and len(text) + text.count("\t") * size > MAX_TEXT:
            raise _refuse("str.expandtabs's result")
    if name == "replace" and len(args) >= 2 and all(isinstance(a, str) for a in args[:2]):
        old, new = args[0], args[1]
        times = text.count(old) if old else len(text) + 1
        if len(text) + times * max(0, len(new) - len(old)) > MAX_TEXT:
            raise _refuse("str.replace's result")


def _bounded_filter(name: str, filter_: Any) -> Any:
    """``filter_`` refusing arguments that would make its result too large (its
    ``@pass_environment`` / ``@pass_eval_context`` marks kept: ``wraps`` copies them)."""
    passes_first = getattr(filter_, "jinja_pass_arg", None) is not None

    @wraps(filter_)
    def bounded(*args: Any, **kwargs: Any) -> Any:
        given = args[1:] if passes_first else args
        value, rest = (given[0], given[1:]) if given else (None, ())
        if _too_big(*rest, *kwargs.values()):
            raise _refuse(f"the {name} filter's width")
        text = value if isinstance(value, str) else None
        if name == "format" and text is not None:
            check_percent(text, tuple(rest) or tuple(kwargs.values()))
        if name == "indent" and text is not None:
            width = rest[0] if rest else kwargs.get("width", 4)
            step = len(width) if isinstance(width, str) else width
            if isinstance(step, int) and len(text) + (text.count("\n") + 1) * step > MAX_TEXT:
                raise _refuse("the indent filter's result")
        if name == "replace" and text is not None and len(rest) >= 2:
            _check_str_method(text, "replace", tuple(map(str, rest[:2])), {})
        if name == "join" and value is not None and not isinstance(value, str):
            items = list(value)  # an iterator is read once: the filter gets the list
            separator = str(rest[0]) if rest else str(kwargs.get("d", ""))
            size = sum(len(str(item)) for item in items) + len(separator) * len(items)
            if "attribute" not in kwargs and size > MAX_TEXT:
                raise _refuse("the join filter's result")
            args = (*args[: len(args) - len(given)], items, *rest)
        return filter_(*args, **kwargs)

    return bounded
