#!/usr/bin/env python3
"""Generates C++ message types with encode/decode for every version from weir's .wsc schemas.

usage: gen_cpp.py --schema-dir protocol/schema --out-dir build/generated/protocol/gen [--list]

Outputs (under out-dir):
  <snake_name>.h            one per message: the struct, nested structs, version constants
  messages_<n>.cpp          implementations, batched into a few translation units
  api_registry.h/.cpp       a descriptor per API key and dispatch helpers
"""
import argparse
import glob
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wsc  # noqa: E402

BATCHES = 8
CPP_KEYWORDS = {'default', 'delete', 'operator', 'new', 'class', 'template', 'this', 'throw',
                'private', 'public', 'protected', 'namespace', 'register', 'union', 'struct',
                'switch', 'case', 'int', 'long', 'short', 'char', 'bool', 'auto', 'const'}

INT_TYPES = {'int8': 'std::int8_t', 'int16': 'std::int16_t', 'int32': 'std::int32_t',
             'int64': 'std::int64_t', 'uint16': 'std::uint16_t', 'uint32': 'std::uint32_t'}
READ_FN = {'int8': 'i8', 'int16': 'i16', 'int32': 'i32', 'int64': 'i64', 'uint16': 'u16',
           'uint32': 'u32', 'float64': 'f64', 'bool': 'boolean', 'uuid': 'uuid'}
FIXED_SIZE = {'int8': 1, 'int16': 2, 'int32': 4, 'int64': 8, 'uint16': 2, 'uint32': 4,
              'float64': 8, 'bool': 1, 'uuid': 16}


def member_name(field):
    n = wsc.snake(field.name)
    return n + '_' if n in CPP_KEYWORDS else n


def ever_nullable(field):
    return not field.nullable.intersect(field.versions).empty() or (
        field.default == 'null')


class Gen:
    def __init__(self, msg):
        self.msg = msg
        self.structs = {}  # name -> fields
        self.order = []    # struct names, children first
        for name in msg.common_order:
            self._collect(msg.commons[name], name)
        self._collect_fields(msg.fields)

    # -- struct collection -------------------------------------------------------------
    def _collect_fields(self, fields):
        for f in fields:
            if f.elem_is_struct and f.fields:
                self._collect(f.fields, f.elem)
            elif f.elem_is_struct and f.elem in self.msg.commons:
                self._collect(self.msg.commons[f.elem], f.elem)
            elif f.elem_is_struct and f.elem not in self.structs:
                raise ValueError('%s: unknown struct type %s' % (self.msg.name, f.elem))

    def _collect(self, fields, name):
        if name in self.structs:
            if _shape(self.structs[name]) != _shape(fields):
                raise ValueError('%s: struct %s defined twice differently' % (self.msg.name, name))
            return
        self._collect_fields(fields)
        self.structs[name] = fields
        self.order.append(name)

    # -- types and defaults ------------------------------------------------------------
    def elem_type(self, typ):
        if typ in INT_TYPES:
            return INT_TYPES[typ]
        return {'bool': 'bool', 'float64': 'double', 'string': 'std::string', 'bytes': 'Bytes',
                'records': 'Bytes', 'uuid': 'Uuid'}.get(typ, typ)

    def member_type(self, f):
        base = self.elem_type(f.elem)
        if f.is_array:
            base = 'std::vector<%s>' % base
        if f.elem == 'records' or ever_nullable(f):
            return 'std::optional<%s>' % base
        return base

    def default_init(self, f):
        d = f.default
        optional = f.elem == 'records' or ever_nullable(f)
        if f.elem_is_struct and not f.is_array and optional and f.is_tagged:
            # Kafka's generated classes start a tagged struct field as an empty struct whatever
            # the schema's default says; null is then written explicitly (see read_value).
            return '{std::in_place}'
        if f.is_array or f.elem_is_struct:
            if d == 'null':
                return ''
            return '{std::in_place}' if optional else ''
        if f.elem == 'records':
            return ''
        if f.elem in ('string',):
            if d == 'null' or (d is None and optional):
                return '' if d == 'null' else '{std::in_place}'
            if d is None or d == '':
                return '{std::in_place}' if optional else ''
            return '{"%s"}' % d.replace('\\', '\\\\').replace('"', '\\"')
        if f.elem == 'bytes':
            if d == 'null':
                return ''
            return '{std::in_place}' if optional else ''
        if f.elem == 'bool':
            return '{%s}' % ('true' if str(d).lower() == 'true' else 'false')
        if f.elem == 'uuid':
            return ''
        if f.elem == 'float64':
            return '{%s}' % (d if d not in (None, '') else '0.0')
        if f.elem in INT_TYPES:
            if d in (None, ''):
                return '{0}'
            v = int(d, 0)
            if f.elem == 'int64':
                if v == -2**63:
                    return '{INT64_MIN}'
                return '{%dLL}' % v
            if f.elem == 'int32' and v == -2**31:
                return '{INT32_MIN}'
            if f.elem == 'uint32':
                return '{%dU}' % v
            return '{%d}' % v
        raise ValueError('no default for %s %s' % (f.name, f.type))

    # -- header ------------------------------------------------------------------------
    def struct_decl(self, name, fields, indent, top=False):
        p = ' ' * indent
        out = ['%sstruct %s {' % (p, name)]
        if top:
            m = self.msg
            if m.api_key >= 0:
                out.append('%s  static constexpr std::int16_t kApiKey = %d;' % (p, m.api_key))
            out.append('%s  static constexpr std::int16_t kMinVersion = %d;' % (p, m.versions.lo))
            out.append('%s  static constexpr std::int16_t kMaxVersion = %d;' % (p, m.versions.hi))
            first_flex = -1 if m.flexible.empty() else m.flexible.lo
            out.append('%s  static constexpr std::int16_t kFirstFlexibleVersion = %d;  // -1: none'
                       % (p, first_flex))
            out.append('%s  static constexpr bool kLatestVersionUnstable = %s;'
                       % (p, 'true' if m.latest_unstable else 'false'))
            out.append('%s  static constexpr std::string_view kName = "%s";' % (p, m.name))
            out.append('')
            for sname in self.order:
                out.extend(self.struct_decl(sname, self.structs[sname], indent + 2))
                out.append('')
        for f in fields:
            out.append('%s  %s %s%s;' % (p, self.member_type(f), member_name(f), self.default_init(f)))
            if f.elem == 'records' and not f.is_array:
                out.append('%s  // When set, the field holds these bytes instead of %s, sent from their files.'
                           % (p, member_name(f)))
                out.append('%s  std::shared_ptr<const FileBytes> %s_in_files;' % (p, member_name(f)))
        out.append('%s  std::vector<UnknownTaggedField> unknown_tagged_fields;' % p)
        if any(f.is_tagged for f in fields):
            out.append('%s  std::uint32_t tagged_seen = 0;  // bit i: tagged field i was on the wire' % p)
        out.append('')
        if not top:
            # Declared here, defaulted out of line: nested types with member initializers must be
            # default-constructible while the enclosing message is still incomplete (clang).
            out.append('%s  %s();' % (p, name))
        out.append('%s  void decode(Reader& r, std::int16_t version);' % p)
        out.append('%s  void encode(Writer& w, std::int16_t version) const;' % p)
        if top or self.has_error_codes(fields):
            out.extend(self.error_visitor(fields, indent))
        out.append('%s  bool operator==(const %s&) const = default;' % (p, name))
        out.append('%s};' % p)
        return out

    # -- error codes -------------------------------------------------------------------
    def has_error_codes(self, fields, seen=None):
        """Whether these fields hold an error code, directly or in nested structs."""
        seen = set() if seen is None else seen
        for f in fields:
            if is_error_code(f):
                return True
            if f.elem_is_struct and f.elem not in seen:
                seen.add(f.elem)
                if self.has_error_codes(self.structs[f.elem], seen):
                    return True
        return False

    def error_visitor(self, fields, indent):
        """for_each_error_code(f, depth): f(code, depth) for every non-zero error code field;
        depth 0 is the message's own fields, one more per array of entries nested in."""
        p = ' ' * indent
        out = ['%s  // Calls f(code, depth) for each non-zero error code held (depth 0: this message\'s own' % p,
               '%s  // fields; +1 per array of entries); fields absent at a version hold 0.' % p,
               '%s  template <class F>' % p,
               '%s  void for_each_error_code(F&& f, [[maybe_unused]] int depth = 0) const {' % p]
        for f in fields:
            mn = member_name(f)
            optional = f.elem == 'records' or ever_nullable(f)
            if is_error_code(f):
                out.append('%s    if (%s != 0) f(%s, depth);' % (p, mn, mn))
            elif f.elem_is_struct and self.has_error_codes(self.structs[f.elem]):
                ref = '(*%s)' % mn if optional else mn
                guard = 'if (%s) ' % mn if optional else ''
                if f.is_array:
                    out.append('%s    %sfor (const auto& e : %s) e.for_each_error_code(f, depth + 1);'
                               % (p, guard, ref))
                else:
                    out.append('%s    %s%s.for_each_error_code(f, depth);' % (p, guard, ref))
        if len(out) == 4:
            out.append('%s    (void)f;' % p)
        out.append('%s  }' % p)
        return out

    def header(self):
        m = self.msg
        out = ['// Generated by protocol/tools/gen_cpp.py from protocol/schema; do not edit.',
               '#pragma once', '', '#include <climits>', '#include <cstdint>', '#include <memory>', '#include <optional>',
               '#include <string>', '#include <string_view>', '#include <vector>', '',
               '#include "protocol/codec.h"', '', 'namespace weir::protocol {', '']
        out.extend(self.struct_decl(m.name, m.fields, 0, top=True))
        out.extend(['', '}  // namespace weir::protocol', ''])
        return '\n'.join(out)

    # -- implementation ----------------------------------------------------------------
    def flexible_expr(self):
        return self.msg.flexible.cond('version', within=None) if not self.msg.flexible.empty() else 'false'

    def present_cond(self, f):
        return f.versions.cond('version', within=self.msg.versions)

    def nullable_cond(self, f):
        return f.nullable.cond('version', within=self.msg.versions)

    def read_value(self, f, target, elem_only, ind, r='r'):
        """Statements reading one value of field f (or one element when elem_only) into target."""
        p = ' ' * ind
        typ = f.elem
        nullable_here = self.nullable_cond(f)
        optional = (f.elem == 'records' or ever_nullable(f)) and not elem_only
        if f.is_array and not elem_only:
            et = self.elem_type(typ)
            minsize = FIXED_SIZE.get(typ, 1)
            lines = ['%s{' % p,
                     '%s  const std::int64_t n = %s.length(flexible, 4, %d);' % (p, r, minsize),
                     '%s  if (n < 0) {' % p]
            if optional:
                lines.append('%s    if (%s) %s.reset(); else %s.fail();' % (p, nullable_here, target, r))
            else:
                lines.append('%s    %s.fail();' % (p, r))
            lines.append('%s  } else {' % p)
            vec = target
            if optional:
                lines.append('%s    %s.emplace();' % (p, target))
                vec = '(*%s)' % target
            lines.append('%s    %s.clear();' % (p, vec))
            lines.append('%s    %s.reserve(static_cast<std::size_t>(n));' % (p, vec))
            lines.append('%s    for (std::int64_t i = 0; i < n && %s.ok(); ++i) {' % (p, r))
            lines.append('%s      %s& e = %s.emplace_back();' % (p, et, vec))
            lines.extend(self.read_value(f, 'e', True, ind + 6, r))
            lines.append('%s    }' % p)
            lines.append('%s  }' % p)
            lines.append('%s}' % p)
            return lines
        if typ in READ_FN:
            return ['%s%s = %s.%s();' % (p, target, r, READ_FN[typ])]
        if typ in ('string', 'bytes', 'records'):
            fn = 'string' if typ == 'string' else 'bytes'
            lines = ['%s{' % p, '%s  bool is_null = false;' % p,
                     '%s  auto v = %s.%s(flexible, is_null);' % (p, r, fn)]
            if optional:
                lines.append('%s  if (is_null) { if (%s) %s.reset(); else %s.fail(); }'
                             % (p, nullable_here, target, r))
                lines.append('%s  else %s = std::move(v);' % (p, target))
            else:
                lines.append('%s  if (is_null) %s.fail();' % (p, r))
                lines.append('%s  %s = std::move(v);' % (p, target))
            lines.append('%s}' % p)
            return lines
        # struct
        if optional and f.is_tagged:
            # Inside a tagged field Kafka marks a nullable struct with a uvarint: 0 null, 1 present.
            return ['%s{' % p,
                    '%s  const std::uint32_t marker = %s.uvarint();' % (p, r),
                    '%s  if (marker == 0) { %s.reset(); }' % (p, target),
                    '%s  else { %s.emplace(); %s->decode(%s, version); }' % (p, target, target, r),
                    '%s}' % p]
        if optional:
            return ['%s{' % p,
                    '%s  const std::int8_t marker = %s.i8();' % (p, r),
                    '%s  if (marker < 0) { if (%s) %s.reset(); else %s.fail(); }'
                    % (p, nullable_here, target, r),
                    '%s  else { %s.emplace(); %s->decode(%s, version); }' % (p, target, target, r),
                    '%s}' % p]
        return ['%s%s.decode(%s, version);' % (p, target, r)]

    def write_value(self, f, src, elem_only, ind, w='w'):
        p = ' ' * ind
        typ = f.elem
        nullable_here = self.nullable_cond(f)
        optional = (f.elem == 'records' or ever_nullable(f)) and not elem_only
        if f.is_array and not elem_only:
            lines = []
            vec = src
            if optional:
                lines.append('%sif (!%s) {' % (p, src))
                lines.append('%s  %s.length(flexible, 4, %s ? -1 : 0);' % (p, w, nullable_here))
                lines.append('%s} else {' % p)
                vec = '(*%s)' % src
                p2 = p + '  '
            else:
                lines.append('%s{' % p)
                p2 = p + '  '
            lines.append('%s%s.length(flexible, 4, static_cast<std::int64_t>(%s.size()));' % (p2, w, vec))
            lines.append('%sfor (const auto& e : %s) {' % (p2, vec))
            lines.extend(self.write_value(f, 'e', True, len(p2) + 2, w))
            lines.append('%s}' % p2)
            lines.append('%s}' % p)
            return lines
        if typ in READ_FN:
            return ['%s%s.%s(%s);' % (p, w, READ_FN[typ], src)]
        if typ == 'records' and not elem_only and not f.is_array:
            return ['%sif (%s_in_files) {' % (p, src),
                    '%s  %s.file_bytes(flexible, %s_in_files);' % (p, w, src),
                    '%s} else if (%s) {' % (p, src),
                    '%s  %s.bytes(flexible, *%s);' % (p, w, src),
                    '%s} else if (%s) {' % (p, nullable_here),
                    '%s  %s.null_bytes(flexible);' % (p, w),
                    '%s} else {' % p,
                    '%s  %s.bytes(flexible, {});' % (p, w),
                    '%s}' % p]
        if typ in ('string', 'bytes', 'records'):
            fn = 'string' if typ == 'string' else 'bytes'
            if optional:
                return ['%sif (%s) %s.%s(flexible, *%s);' % (p, src, w, fn, src),
                        '%selse if (%s) %s.null_%s(flexible);' % (p, nullable_here, w, fn),
                        '%selse %s.%s(flexible, {});' % (p, w, fn)]
            return ['%s%s.%s(flexible, %s);' % (p, w, fn, src)]
        if optional and f.is_tagged:
            return ['%sif (%s) { %s.uvarint(1); %s->encode(%s, version); }' % (p, src, w, src, w),
                    '%selse { %s.uvarint(0); }' % (p, w)]
        if optional:
            return ['%sif (%s) { %s.i8(1); %s->encode(%s, version); }' % (p, src, w, src, w),
                    '%selse { %s.i8(-1); }' % (p, w)]
        return ['%s%s.encode(%s, version);' % (p, src, w)]

    def struct_impl(self, qual, fields):
        # A field named Version (KRaft control records) becomes a member `version`, which the
        # functions' parameter of that name hides: such members are reached through this->.
        if any(member_name(f) == 'version' for f in fields):
            body = self._struct_impl(qual, fields, lambda f: 'this->' + member_name(f))
            return (['#pragma GCC diagnostic push', '#pragma GCC diagnostic ignored "-Wshadow"'] + body +
                    ['#pragma GCC diagnostic pop', ''])
        return self._struct_impl(qual, fields, member_name)

    def _struct_impl(self, qual, fields, member_name):
        out = []
        tagged = sorted([f for f in fields if f.is_tagged], key=lambda f: f.tag)
        tag_index = {id(f): i for i, f in enumerate(f for f in fields if f.is_tagged)}
        flex = self.flexible_expr()
        # decode
        out.append('void %s::decode(Reader& r, [[maybe_unused]] std::int16_t version) {' % qual)
        out.append('  [[maybe_unused]] const bool flexible = %s;' % flex)
        for f in fields:
            if f.is_tagged:
                continue
            cond = self.present_cond(f)
            if cond == 'false':
                continue
            if cond == 'true':
                out.extend(self.read_value(f, member_name(f), False, 2))
            else:
                out.append('  if (%s) {' % cond)
                out.extend(self.read_value(f, member_name(f), False, 4))
                out.append('  }')
        out.append('  if (flexible) {')
        out.append('    r.tagged_fields(unknown_tagged_fields, [&]([[maybe_unused]] std::uint32_t tag, '
                   '[[maybe_unused]] Reader& sub) -> bool {')
        if tagged:
            out.append('      switch (tag) {')
            for f in tagged:
                cond = f.tagged.cond('version', within=None)
                out.append('        case %d:' % f.tag)
                out.append('          if (!(%s)) return false;' % cond)
                out.extend(self.read_value(f, member_name(f), False, 10, 'sub'))
                out.append('          tagged_seen |= 1u << %d;' % tag_index[id(f)])
                out.append('          return true;')
            out.append('        default:')
            out.append('          return false;')
            out.append('      }')
        else:
            out.append('      return false;')
        out.append('    });')
        out.append('  }')
        out.append('}')
        out.append('')
        # encode
        out.append('void %s::encode(Writer& w, [[maybe_unused]] std::int16_t version) const {' % qual)
        out.append('  [[maybe_unused]] const bool flexible = %s;' % flex)
        for f in fields:
            if f.is_tagged:
                continue
            cond = self.present_cond(f)
            if cond == 'false':
                continue
            if cond == 'true':
                out.extend(self.write_value(f, member_name(f), False, 2))
            else:
                out.append('  if (%s) {' % cond)
                out.extend(self.write_value(f, member_name(f), False, 4))
                out.append('  }')
        out.append('  if (flexible) {')
        out.append('    std::vector<TaggedOut> tags;')
        if tagged:
            out.append('    static const %s kDefaults{};' % qual)
            for f in tagged:
                cond = f.tagged.cond('version', within=None)
                mn = member_name(f)
                out.append('    if ((%s) && ((tagged_seen & (1u << %d)) != 0 || !(%s == kDefaults.%s))) {'
                           % (cond, tag_index[id(f)], mn, mn.removeprefix('this->')))
                out.append('      Bytes buf;')
                out.append('      Writer tw(buf);')
                out.extend(self.write_value(f, mn, False, 6, 'tw'))
                out.append('      tags.push_back(TaggedOut{%d, std::move(buf)});' % f.tag)
                out.append('    }')
        out.append('    for (const auto& u : unknown_tagged_fields) tags.push_back(TaggedOut{u.tag, u.data});')
        out.append('    std::sort(tags.begin(), tags.end(), '
                   '[](const TaggedOut& a, const TaggedOut& b) { return a.tag < b.tag; });')
        out.append('    w.uvarint(static_cast<std::uint32_t>(tags.size()));')
        out.append('    for (const auto& t : tags) {')
        out.append('      w.uvarint(t.tag);')
        out.append('      w.uvarint(static_cast<std::uint32_t>(t.data.size()));')
        out.append('      w.raw(t.data.data(), t.data.size());')
        out.append('    }')
        out.append('  }')
        out.append('}')
        out.append('')
        return out

    def impl(self):
        m = self.msg
        out = []
        for sname in self.order:
            out.append('%s::%s::%s() = default;' % (m.name, sname, sname))
            out.append('')
            out.extend(self.struct_impl('%s::%s' % (m.name, sname), self.structs[sname]))
        out.extend(self.struct_impl(m.name, m.fields))
        return out


def is_error_code(field):
    """Kafka names its error code fields ErrorCode, or <Something>ErrorCode."""
    return field.elem == 'int16' and not field.is_array and field.name.endswith('ErrorCode')


def _shape(fields):
    return [(f.name, f.type, f.versions, _shape(f.fields)) for f in fields]


def header_name(msg_name):
    return wsc.snake(msg_name) + '.h'


def load(schema_dir):
    msgs = []
    for path in sorted(glob.glob(os.path.join(schema_dir, '**', '*.wsc'), recursive=True)):
        msgs.append(wsc.parse(path))
    return msgs


def registry(msgs):
    apis = {}
    for m in msgs:
        if m.kind in ('request', 'response') and m.api_key >= 0:
            apis.setdefault(m.api_key, {})[m.kind] = m
    keys = sorted(apis)
    h = ['// Generated by protocol/tools/gen_cpp.py; do not edit.', '#pragma once', '',
         '#include <cstdint>', '#include <optional>', '#include <span>', '#include <string_view>',
         '#include <type_traits>', '', '#include "protocol/codec.h"']
    for k in keys:
        for kind in ('request', 'response'):
            h.append('#include "protocol/gen/%s"' % header_name(apis[k][kind].name))
    h += ['', 'namespace weir::protocol {', '',
          '// What the schema defines for one API (the versions the codec can read and write).',
          'struct ApiDescriptor {', '  std::int16_t key;', '  std::string_view name;',
          '  std::int16_t min_version;', '  std::int16_t max_version;',
          '  std::int16_t first_flexible_version;  // -1: never flexible',
          '  bool latest_version_unstable;', '',
          '  [[nodiscard]] constexpr bool flexible(std::int16_t version) const noexcept {',
          '    return first_flexible_version >= 0 && version >= first_flexible_version;', '  }',
          '  [[nodiscard]] constexpr bool supports(std::int16_t version) const noexcept {',
          '    return version >= min_version && version <= max_version;', '  }', '};', '',
          'inline constexpr ApiDescriptor kApiDescriptors[] = {']
    for k in keys:
        rq = apis[k]['request']
        ff = -1 if rq.flexible.empty() else rq.flexible.lo
        h.append('    {%d, "%s", %d, %d, %d, %s},' % (k, rq.name[:-len('Request')], rq.versions.lo,
                                                    rq.versions.hi, ff,
                                                    'true' if rq.latest_unstable else 'false'))
    h += ['};', '',
          '// The descriptor for an API key, or nullptr when the codec does not know the key.',
          'const ApiDescriptor* find_api(std::int16_t key) noexcept;', '',
          '// Calls f(std::type_identity<Request>{}, std::type_identity<Response>{}) for the key;',
          '// returns false when the key is unknown.',
          'template <class F>', 'bool visit_api(std::int16_t key, F&& f) {', '  switch (key) {']
    for k in keys:
        h.append('    case %d: f(std::type_identity<%s>{}, std::type_identity<%s>{}); return true;'
                 % (k, apis[k]['request'].name, apis[k]['response'].name))
    h += ['    default: return false;', '  }', '}', '',
          '// Decodes a whole message body; false if it is malformed or has trailing bytes.',
          'template <class M>',
          'bool decode_body(std::span<const std::uint8_t> body, std::int16_t version, M& out) {',
          '  Reader r(body);', '  out.decode(r, version);', '  return r.ok() && r.remaining() == 0;', '}',
          '', 'template <class M>', 'Bytes encode_body(const M& m, std::int16_t version) {',
          '  Bytes out;', '  Writer w(out);', '  m.encode(w, version);', '  return out;', '}', '',
          '// Decode then encode again (tests and tools): nullopt when the body does not decode.',
          'std::optional<Bytes> reencode(std::int16_t key, bool is_request, std::int16_t version,',
          '                              std::span<const std::uint8_t> body);', '',
          '}  // namespace weir::protocol', '']
    c = ['// Generated by protocol/tools/gen_cpp.py; do not edit.', '#include "protocol/gen/api_registry.h"',
         '', '#include <algorithm>', '', 'namespace weir::protocol {', '',
         'const ApiDescriptor* find_api(std::int16_t key) noexcept {',
         '  for (const auto& d : kApiDescriptors) {', '    if (d.key == key) return &d;', '  }',
         '  return nullptr;', '}', '',
         'std::optional<Bytes> reencode(std::int16_t key, bool is_request, std::int16_t version,',
         '                              std::span<const std::uint8_t> body) {',
         '  std::optional<Bytes> result;',
         '  visit_api(key, [&]<class Rq, class Rs>(std::type_identity<Rq>, std::type_identity<Rs>) {',
         '    if (is_request) {', '      Rq m;',
         '      if (decode_body(body, version, m)) result = encode_body(m, version);', '    } else {',
         '      Rs m;', '      if (decode_body(body, version, m)) result = encode_body(m, version);',
         '    }', '  });', '  return result;', '}', '', '}  // namespace weir::protocol', '']
    return '\n'.join(h), '\n'.join(c)


def records_registry(msgs):
    recs = [m for m in msgs if m.kind not in ('request', 'response')]
    h = ['// Generated by protocol/tools/gen_cpp.py; do not edit.', '#pragma once', '',
         '#include <optional>', '#include <span>', '#include <string_view>', '',
         '#include "protocol/codec.h"']
    for m in recs:
        h.append('#include "protocol/gen/%s"' % header_name(m.name))
    h += ['', 'namespace weir::protocol {', '',
          '// Decode then encode again a record of internal-topic/metadata schema `name`.',
          'std::optional<Bytes> reencode_record(std::string_view name, std::int16_t version,',
          '                                     std::span<const std::uint8_t> body);', '',
          '}  // namespace weir::protocol', '']
    c = ['// Generated by protocol/tools/gen_cpp.py; do not edit.',
         '#include "protocol/gen/record_registry.h"', '', 'namespace weir::protocol {', '',
         'namespace {', 'template <class M>',
         'std::optional<Bytes> reencode_as(std::int16_t version, std::span<const std::uint8_t> body) {',
         '  M m;', '  Reader r(body);', '  m.decode(r, version);',
         '  if (!r.ok() || r.remaining() != 0) return std::nullopt;', '  Bytes out;', '  Writer w(out);',
         '  m.encode(w, version);', '  return out;', '}', '}  // namespace', '',
         'std::optional<Bytes> reencode_record(std::string_view name, std::int16_t version,',
         '                                     std::span<const std::uint8_t> body) {']
    for m in recs:
        c.append('  if (name == "%s") return reencode_as<%s>(version, body);' % (m.name, m.name))
    c += ['  return std::nullopt;', '}', '', '}  // namespace weir::protocol', '']
    return '\n'.join(h), '\n'.join(c)


def outputs(msgs):
    files = [header_name(m.name) for m in msgs]
    files += ['messages_%d.cpp' % i for i in range(BATCHES)]
    files += ['api_registry.h', 'api_registry.cpp', 'record_registry.h', 'record_registry.cpp']
    return files


def write_if_changed(path, text):
    if os.path.exists(path) and open(path).read() == text:
        return
    with open(path, 'w') as f:
        f.write(text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--schema-dir', required=True)
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('--list', action='store_true')
    args = ap.parse_args()
    msgs = load(args.schema_dir)
    if args.list:
        print(';'.join(os.path.join(args.out_dir, f) for f in outputs(msgs)))
        return
    os.makedirs(args.out_dir, exist_ok=True)
    batches = [[] for _ in range(BATCHES)]
    for i, m in enumerate(msgs):
        g = Gen(m)
        write_if_changed(os.path.join(args.out_dir, header_name(m.name)), g.header())
        batches[i % BATCHES].append((m, g))
    for i, batch in enumerate(batches):
        out = ['// Generated by protocol/tools/gen_cpp.py; do not edit.', '#include <algorithm>', '']
        for m, _ in batch:
            out.append('#include "protocol/gen/%s"' % header_name(m.name))
        out += ['', 'namespace weir::protocol {', '']
        for m, g in batch:
            out.extend(g.impl())
        out += ['}  // namespace weir::protocol', '']
        write_if_changed(os.path.join(args.out_dir, 'messages_%d.cpp' % i), '\n'.join(out))
    h, c = registry(msgs)
    write_if_changed(os.path.join(args.out_dir, 'api_registry.h'), h)
    write_if_changed(os.path.join(args.out_dir, 'api_registry.cpp'), c)
    h, c = records_registry(msgs)
    write_if_changed(os.path.join(args.out_dir, 'record_registry.h'), h)
    write_if_changed(os.path.join(args.out_dir, 'record_registry.cpp'), c)


if __name__ == '__main__':
    main()
