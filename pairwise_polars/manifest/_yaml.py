"""A YAML loader that remembers where every key and value came from (for error messages)."""

from __future__ import annotations

from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode


class Mapping(dict):
    """A YAML mapping: a dict plus the 1-based ``line`` of the mapping, of each key
    (``key_lines``), of each value (``value_lines``), and any ``duplicates`` as (key, line,
    line of the previous occurrence). A repeated key keeps its last value, as in PyYAML."""

    line: int = 0
    key_lines: dict[Any, int]
    value_lines: dict[Any, int]
    duplicates: list[tuple[Any, int, int]]


class Sequence(list):
    """A YAML sequence: a list plus the 1-based ``line`` of the sequence and of each item."""

    line: int = 0
    lines: list[int]


def _line(node: Node) -> int:
    return node.start_mark.line + 1


class _LineLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences keep the line of every item."""

    def construct_mapping(self, node: MappingNode, deep: bool = False) -> Mapping:
        self.flatten_mapping(node)  # resolves YAML merge keys (<<)
        mapping = Mapping()
        mapping.line = _line(node)
        mapping.key_lines, mapping.value_lines, mapping.duplicates = {}, {}, []
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                hash(key)
            except TypeError:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping",
                    node.start_mark,
                    "found an unhashable key",
                    key_node.start_mark,
                ) from None
            if key in mapping:
                mapping.duplicates.append((key, _line(key_node), mapping.key_lines[key]))
            mapping[key] = self.construct_object(value_node, deep=True)
            mapping.key_lines[key] = _line(key_node)
            mapping.value_lines[key] = _line(value_node)
        return mapping

    def construct_sequence(self, node: SequenceNode, deep: bool = False) -> Sequence:
        sequence = Sequence(self.construct_object(child, deep=True) for child in node.value)
        sequence.line = _line(node)
        sequence.lines = [_line(child) for child in node.value]
        return sequence


def _mapping(loader: _LineLoader, node: MappingNode) -> Mapping:
    return loader.construct_mapping(node, deep=True)


def _sequence(loader: _LineLoader, node: SequenceNode) -> Sequence:
    return loader.construct_sequence(node, deep=True)


_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
_LineLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _sequence)


def load_with_lines(text: str) -> Any:
    """Parse one YAML document; mappings become :class:`Mapping`, lists :class:`Sequence`."""
    return yaml.load(text, Loader=_LineLoader)  # a SafeLoader subclass: no arbitrary objects


def within_nodes(value: Any, limit: int) -> bool:
    """Whether ``value`` has at most ``limit`` nodes once YAML aliases are expanded (an alias
    bomb is small as loaded, aliases sharing objects, and huge once copied or serialised)."""
    budget = [limit]

    def walk(node: Any) -> bool:
        budget[0] -= 1
        if budget[0] < 0:
            return False
        if isinstance(node, dict):
            return all(walk(k) and walk(v) for k, v in node.items())
        if isinstance(node, list):
            return all(walk(item) for item in node)
        return True

    return walk(value)
