"""Parser for weir's schema notation (.wsc). See protocol/README.md for the notation.

A file holds one message: a header line, then indented field lines (two spaces per level),
then optional `common` blocks defining structs shared by several fields.
"""
import dataclasses
import re
import shlex

PRIMITIVES = {'bool', 'int8', 'int16', 'int32', 'int64', 'uint16', 'uint32', 'float64',
              'string', 'bytes', 'records', 'uuid'}
MAX_VERSION = 0x7fff


@dataclasses.dataclass
class Versions:
    lo: int
    hi: int  # inclusive; lo > hi means empty

    @staticmethod
    def parse(text):
        text = text.strip()
        if text == 'none':
            return Versions(1, 0)
        if text.endswith('+'):
            return Versions(int(text[:-1]), MAX_VERSION)
        if '-' in text:
            a, b = text.split('-')
            return Versions(int(a), int(b))
        return Versions(int(text), int(text))

    def empty(self):
        return self.lo > self.hi

    def contains(self, v):
        return self.lo <= v <= self.hi

    def intersect(self, other):
        return Versions(max(self.lo, other.lo), min(self.hi, other.hi))

    def covers(self, other):
        """True if every version in `other` is in self."""
        return other.empty() or (self.lo <= other.lo and other.hi <= self.hi)

    def cond(self, var='version', within=None):
        """C++ condition for `var` being in this range, simplified against the known range `within`."""
        if self.empty():
            return 'false'
        if within is not None and self.covers(within):
            return 'true'
        parts = []
        if within is None or self.lo > within.lo:
            parts.append('%s >= %d' % (var, self.lo))
        if self.hi != MAX_VERSION and (within is None or self.hi < within.hi):
            parts.append('%s <= %d' % (var, self.hi))
        return ' && '.join(parts) if parts else 'true'


@dataclasses.dataclass
class Field:
    name: str
    type: str  # as written: int32, string, []Foo, Foo, []int32
    versions: Versions
    nullable: Versions
    tag: int = -1
    tagged: Versions = dataclasses.field(default_factory=lambda: Versions(1, 0))
    default: object = None
    flex_override: Versions | None = None
    map_key: bool = False
    ignorable: bool = False
    entity: str = ''
    fields: list = dataclasses.field(default_factory=list)

    @property
    def is_array(self):
        return self.type.startswith('[]')

    @property
    def elem(self):
        return self.type[2:] if self.is_array else self.type

    @property
    def elem_is_struct(self):
        return self.elem not in PRIMITIVES

    @property
    def is_tagged(self):
        return self.tag >= 0


@dataclasses.dataclass
class Message:
    kind: str  # request, response, data, metadata, coordinator-key, ...
    name: str
    api_key: int
    versions: Versions
    flexible: Versions
    latest_unstable: bool
    fields: list
    commons: dict  # name -> list of fields
    common_order: list


def _parse_field(tokens, depth):
    name, typ = tokens[0], tokens[1]
    f = Field(name=name, type=typ, versions=Versions(0, MAX_VERSION), nullable=Versions(1, 0))
    for tok in tokens[2:]:
        if '=' in tok:
            k, v = tok.split('=', 1)
            if k == 'v':
                f.versions = Versions.parse(v)
            elif k == 'null':
                f.nullable = Versions.parse(v)
            elif k == 'tag':
                f.tag = int(v)
            elif k == 'tagged':
                f.tagged = Versions.parse(v)
            elif k == 'default':
                f.default = v
            elif k == 'flex':
                f.flex_override = Versions.parse(v)
            elif k == 'entity':
                f.entity = v
            else:
                raise ValueError('unknown field attribute %r' % k)
        elif tok == 'mapkey':
            f.map_key = True
        elif tok == 'ignorable':
            f.ignorable = True
        elif tok == 'zerocopy':
            pass
        else:
            raise ValueError('unknown field flag %r' % tok)
    return f


def parse(path):
    lines = []
    for raw in open(path):
        if not raw.strip() or raw.lstrip().startswith('#'):
            continue
        indent = len(raw) - len(raw.lstrip(' '))
        if indent % 2:
            raise ValueError('%s: odd indentation: %r' % (path, raw))
        lines.append((indent // 2, shlex.split(raw.strip())))
    depth0, head = lines[0]
    assert depth0 == 0, path
    msg = Message(kind=head[0], name=head[1], api_key=-1, versions=Versions(0, 0),
                  flexible=Versions(1, 0), latest_unstable=False, fields=[], commons={},
                  common_order=[])
    for tok in head[2:]:
        if tok == 'latest-unstable':
            msg.latest_unstable = True
            continue
        k, v = tok.split('=', 1)
        if k == 'key':
            msg.api_key = int(v)
        elif k == 'versions':
            msg.versions = Versions.parse(v)
        elif k == 'flexible':
            msg.flexible = Versions.parse(v)
        elif k == 'listeners':
            pass
        else:
            raise ValueError('%s: unknown header attribute %r' % (path, k))

    stack = [(1, msg.fields)]  # (depth of the fields in the list, list)
    for depth, tokens in lines[1:]:
        if depth == 0:
            assert tokens[0] == 'common', (path, tokens)
            body = []
            msg.commons[tokens[1]] = body
            msg.common_order.append(tokens[1])
            stack = [(1, body)]
            continue
        while stack[-1][0] > depth:
            stack.pop()
        if stack[-1][0] != depth:
            # children of the last field
            parent_list = stack[-1][1]
            parent = parent_list[-1]
            stack.append((depth, parent.fields))
        f = _parse_field(tokens, depth)
        stack[-1][1].append(f)
    return msg


def snake(name):
    s = re.sub(r'([A-Z]+)([A-Z][a-z])', r'\1_\2', name)
    s = re.sub(r'([a-z0-9])([A-Z])', r'\1_\2', s)
    return s.lower()
