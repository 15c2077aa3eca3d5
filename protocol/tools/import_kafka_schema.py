#!/usr/bin/env python3
"""Converts Apache Kafka's message definitions (JSON resources inside the kafka-clients and
coordinator jars) into weir's schema notation (.wsc files, see protocol/README.md).

Only protocol facts are carried over: message and field names, types, version ranges,
nullability, tags, defaults and map keys. Descriptions and comments are dropped.

usage: import_kafka_schema.py OUT_DIR FILE.json...
"""
import json
import os
import re
import sys


def strip_comments(text):
    return re.sub(r'^\s*//.*$', '', text, flags=re.M)


def fmt_default(value):
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    s = str(value)
    if s == '' or re.search(r'\s', s):
        return json.dumps(s)
    return s


def field_line(f, depth):
    parts = [f['name'], f['type']]
    parts.append('v=' + f.get('versions', '0+'))
    if f.get('nullableVersions'):
        parts.append('null=' + f['nullableVersions'])
    if 'tag' in f:
        parts.append('tag=%d' % f['tag'])
        parts.append('tagged=' + f['taggedVersions'])
    if 'default' in f:
        parts.append('default=' + fmt_default(f['default']))
    if f.get('flexibleVersions'):
        parts.append('flex=' + f['flexibleVersions'])
    if f.get('mapKey'):
        parts.append('mapkey')
    if f.get('ignorable'):
        parts.append('ignorable')
    if f.get('zeroCopy'):
        parts.append('zerocopy')
    if f.get('entityType'):
        parts.append('entity=' + f['entityType'])
    return '  ' * depth + ' '.join(parts)


def emit_fields(fields, depth, out):
    for f in fields:
        out.append(field_line(f, depth))
        emit_fields(f.get('fields', []), depth + 1, out)


def convert(d):
    head = [d['type'], d['name']]
    if 'apiKey' in d:
        head.append('key=%d' % d['apiKey'])
    head.append('versions=' + d['validVersions'])
    head.append('flexible=' + d.get('flexibleVersions', 'none'))
    if d.get('latestVersionUnstable'):
        head.append('latest-unstable')
    if d.get('listeners'):
        head.append('listeners=' + ','.join(d['listeners']))
    out = [' '.join(head)]
    emit_fields(d.get('fields', []), 1, out)
    for c in d.get('commonStructs', []):
        out.append('common %s v=%s' % (c['name'], c.get('versions', '0+')))
        emit_fields(c.get('fields', []), 1, out)
    return '\n'.join(out) + '\n'


def main():
    out_dir = sys.argv[1]
    for path in sys.argv[2:]:
        d = json.loads(strip_comments(open(path).read()))
        name = d['name']
        with open(os.path.join(out_dir, name + '.wsc'), 'w') as f:
            f.write(convert(d))


if __name__ == '__main__':
    main()
