#!/usr/bin/env python3
"""Hostile copies of the shared BVH, FBX, glTF and GLB files, through the `keyblend` tool.

Makes mutations of the formats folder's 01_01.bvh (keyblend's BVH reader),
animation_with_skeleton.fbx (assimp, in the tool's isolated process) and every .gltf / .glb file
there and in khronos/ (keyblend's glTF loader): targeted changes to counts,
offsets, indices, values and hierarchies (the classes that crashed or silently misled before),
plus truncations and byte flips; runs `keyblend info` and `keyblend render` on each (and, for
BVH and glTF, `keyblend info --strict`, whose first problem fails the load) under a time
limit and an address-space limit, and fails on a signal, a time-out, a sanitizer report, an exit
code other than 0 or 1, or an exit 1 whose message does not name the file (and, for keyblend's own
readers, the place: a line, a JSON pointer or a byte offset). The mutations are deterministic for a seed; failing inputs are kept.

usage: mutate_formats.py --tool PATH [--formats DIR] [--work DIR] [--count N] [--seed N]
                         [--sanitized]
Without the data folder it prints KEYBLEND-SKIP (ctest reports a skip), unless the environment
sets KEYBLEND_REQUIRE_DATA=1.
"""
import argparse
import copy
import os
import random
import resource
import struct
import subprocess
import sys
import time
import zlib

# --- binary FBX (7.x): a node tree read and written back ------------------------------------------

SCALARS = {'Y': '<h', 'C': '<?', 'I': '<i', 'F': '<f', 'D': '<d', 'L': '<q'}
ARRAYS = {'f': 'f', 'd': 'd', 'l': 'q', 'i': 'i', 'b': '?', 'c': 'b'}


def read_fbx(data):
    """(version, nodes, footer); a node is [name, [(type, value)], children, had_null_record]."""
    if data[:21] != b"Kaydara FBX Binary  \x00":
        raise ValueError('not a binary FBX file')
    version = struct.unpack_from('<I', data, 23)[0]
    wide = version >= 7500
    stack = []  # explicit: the reader must not recurse on the file's depth either
    top = []

    def header(pos):
        if wide:
            end, count, length = struct.unpack_from('<QQQ', data, pos)
            pos += 24
        else:
            end, count, length = struct.unpack_from('<III', data, pos)
            pos += 12
        return end, count, length, data[pos], pos + 1

    def properties(pos, count):
        props = []
        for _ in range(count):
            t = chr(data[pos])
            pos += 1
            if t in SCALARS:
                props.append((t, struct.unpack_from(SCALARS[t], data, pos)[0]))
                pos += struct.calcsize(SCALARS[t])
            elif t in ARRAYS:
                n, encoding, size = struct.unpack_from('<III', data, pos)
                pos += 12
                raw = data[pos:pos + size]
                pos += size
                if encoding == 1:
                    raw = zlib.decompress(raw)
                props.append((t, list(struct.unpack('<%d%s' % (n, ARRAYS[t]), raw))))
            else:
                n = struct.unpack_from('<I', data, pos)[0]
                pos += 4
                props.append((t, data[pos:pos + n]))
                pos += n
        return props, pos

    pos = 27
    siblings = top
    ends = []
    while True:
        end, count, length, name_length, pos = header(pos)
        if end == 0:  # a null record closes the innermost node, or the top level
            if not stack:
                break
            node = stack.pop()
            node[3] = True
            siblings = stack[-1][2] if stack else top
            ends.pop()
            continue
        name = data[pos:pos + name_length].decode('latin1')
        pos += name_length
        props, pos = properties(pos, count)
        node = [name, props, [], False]
        siblings.append(node)
        if pos < end:  # children follow
            stack.append(node)
            ends.append(end)
            siblings = node[2]
        else:
            pos = end
            while ends and pos >= ends[-1]:  # (a node whose children end without a null record)
                stack.pop()
                ends.pop()
                siblings = stack[-1][2] if stack else top
    return version, top, data[pos:]


def write_fbx(version, nodes, footer):
    wide = version >= 7500
    null = b'\0' * (25 if wide else 13)
    out = bytearray(b"Kaydara FBX Binary  \x00\x1a\x00" + struct.pack('<I', version))

    def props_bytes(props):
        b = bytearray()
        for t, v in props:
            b += t.encode()
            if t in SCALARS:
                b += struct.pack(SCALARS[t], v)
            elif t in ARRAYS:
                raw = struct.pack('<%d%s' % (len(v), ARRAYS[t]), *v)
                b += struct.pack('<III', len(v), 0, len(raw)) + raw
            else:
                b += struct.pack('<I', len(v)) + v
        return b

    # Iterative: (node, header position) pairs whose end is patched once their children are out.
    todo = [('node', n) for n in reversed(nodes)]
    while todo:
        kind, item = todo.pop()
        if kind == 'end':
            node, start, count, length = item
            if node[2] or node[3]:
                out.extend(null)
            struct.pack_into('<QQQ' if wide else '<III', out, start, len(out), count, length)
            continue
        name, props, children = item[0], item[1], item[2]
        start = len(out)
        pb = props_bytes(props)
        out.extend(b'\0' * (24 if wide else 12))
        out.append(len(name))
        out.extend(name.encode('latin1'))
        out.extend(pb)
        todo.append(('end', (item, start, len(props), len(pb))))
        todo.extend(('node', c) for c in reversed(children))
    out.extend(null)
    out.extend(footer)
    return bytes(out)


def walk(nodes):
    """(path, node) for every node, parents first."""
    todo = [((n[0],), n) for n in reversed(nodes)]
    while todo:
        path, n = todo.pop()
        yield path, n
        todo.extend((path + (c[0],), c) for c in reversed(n[2]))


# --- FBX mutations ------------------------------------------------------------------------------------

def fbx_objects(nodes, kind):
    return [n for p, n in walk(nodes) if p == ('Objects', kind)]


def fbx_connections(nodes):
    return [n for p, n in walk(nodes) if p == ('Connections', 'C')]


def fbx_arrays(nodes, name):
    return [n for p, n in walk(nodes) if p[-1] == name and n[1] and n[1][0][0] in ARRAYS]


def model_links(nodes):
    models = {n[1][0][1] for n in fbx_objects(nodes, 'Model')}
    return [c for c in fbx_connections(nodes)
            if c[1][0][1] == b'OO' and c[1][1][1] in models and c[1][2][1] in models]


def m_self_parent(r, nodes):
    links = model_links(nodes)
    c = r.choice(links)
    c[1][2] = ('L', c[1][1][1])
    return 'a model is its own parent'


def m_mutual_parents(r, nodes):
    c = r.choice(model_links(nodes))
    conn = [n for n in nodes if n[0] == 'Connections'][0]
    conn[2].append(['C', [('S', b'OO'), ('L', c[1][2][1]), ('L', c[1][1][1])], [], False])
    return 'two models are each other\'s parent'


def m_dangling_link(r, nodes):
    c = r.choice(fbx_connections(nodes))
    c[1][r.choice([1, 2])] = ('L', r.choice([0, -1, 123456789, 2 ** 62]))
    return 'a connection names an object that does not exist'


def m_deep_models(r, nodes):
    depth = r.choice([2000, 20000])
    objects = [n for n in nodes if n[0] == 'Objects'][0]
    conn = [n for n in nodes if n[0] == 'Connections'][0]
    parent = 0
    for i in range(depth):
        oid = 9000000000 + i
        objects[2].append(['Model', [('L', oid), ('S', b'deep%d\x00\x01Model' % i), ('S', b'Null')],
                           [['Version', [('I', 232)], [], False]], True])
        conn[2].append(['C', [('S', b'OO'), ('L', oid), ('L', parent)], [], False])
        parent = oid
    return 'a chain of %d models' % depth


def m_cluster_index(r, nodes):
    indexes = [n for n in fbx_arrays(nodes, 'Indexes') if n[1][0][1]]
    a = r.choice(indexes)[1][0][1]
    a[r.randrange(len(a))] = r.choice([5000, 100000, 2 ** 31 - 1, -1, -2 ** 31])
    return 'a skin cluster index past the vertices'


def m_cluster_weights(r, nodes):
    weights = [n for n in fbx_arrays(nodes, 'Weights') if n[1][0][1]]
    n = r.choice(weights)
    a = n[1][0][1]
    how = r.randrange(4)
    if how == 0:
        a[r.randrange(len(a))] = r.choice([float('nan'), float('inf'), -1.0, 1e30])
    elif how == 1:
        del a[r.randrange(len(a)):]
    elif how == 2:
        a.extend([0.5] * r.randrange(1, 100))
    else:
        n[1][0] = ('d', [])
    return 'skin cluster weights damaged (%d)' % how


def m_vertices(r, nodes):
    n = r.choice(fbx_arrays(nodes, 'Vertices'))
    a = n[1][0][1]
    how = r.randrange(4)
    if how == 0:
        n[1][0] = (n[1][0][0], [])
    elif how == 1:
        del a[r.randrange(len(a)):]
    elif how == 2:
        for _ in range(r.randrange(1, 20)):
            a[r.randrange(len(a))] = r.choice([float('nan'), float('inf'), 1e300])
    else:
        del a[-1]
    return 'vertices damaged (%d)' % how


def m_polygons(r, nodes):
    n = r.choice(fbx_arrays(nodes, 'PolygonVertexIndex'))
    a = n[1][0][1]
    how = r.randrange(4)
    if how == 0:
        for _ in range(r.randrange(1, 20)):
            a[r.randrange(len(a))] = r.choice([10 ** 6, 2 ** 31 - 1, -2 ** 31, -5000])
    elif how == 1:
        n[1][0] = ('i', [])
    elif how == 2:
        a[:] = [abs(x) if x < 0 else x for x in a]  # no polygon ends
    else:
        del a[r.randrange(len(a)):]
    return 'polygon vertex indices damaged (%d)' % how


def m_layer_elements(r, nodes):
    names = ['Normals', 'UV', 'UVIndex', 'Materials', 'NormalsW']
    arrays = [n for name in names for n in fbx_arrays(nodes, name)]
    n = r.choice(arrays)
    a = n[1][0][1]
    if a and r.random() < 0.5:
        del a[r.randrange(len(a)):]
    elif a:
        a[r.randrange(len(a))] = r.choice([10 ** 6, -7]) if n[1][0][0] in 'il' else float('nan')
    return 'a layer element (%s) damaged' % n[0]


def m_curves(r, nodes):
    times = fbx_arrays(nodes, 'KeyTime')
    values = fbx_arrays(nodes, 'KeyValueFloat')
    how = r.randrange(5)
    if how == 0:
        a = r.choice(times)[1][0][1]
        r.shuffle(a)
    elif how == 1:
        n = r.choice(times)
        n[1][0] = ('l', [])
    elif how == 2:
        a = r.choice(values)[1][0][1]
        if a:
            a[r.randrange(len(a))] = float('nan')
    elif how == 3:
        a = r.choice(values)[1][0][1]
        del a[len(a) // 2:]
    else:
        a = r.choice(times)[1][0][1]
        if a:
            a[r.randrange(len(a))] = r.choice([-2 ** 63, 2 ** 63 - 1, 0])
    return 'animation curve damaged (%d)' % how


def m_transforms(r, nodes):
    props = [n for p, n in walk(nodes) if p[-1] == 'P' and n[1] and n[1][0][1] in
             (b'Lcl Translation', b'Lcl Rotation', b'Lcl Scaling', b'PreRotation')]
    n = r.choice(props)
    k = r.randrange(4, len(n[1])) if len(n[1]) > 4 else len(n[1]) - 1
    n[1][k] = ('D', r.choice([float('nan'), float('inf'), 1e39, 0.0, -1e300]))
    return 'a transform property damaged'


FBX_TREE_MUTATIONS = [m_self_parent, m_mutual_parents, m_dangling_link, m_deep_models, m_cluster_index,
                      m_cluster_weights, m_vertices, m_polygons, m_layer_elements, m_curves, m_transforms]


def fbx_raw_mutation(r, data):
    """Byte-level damage to a written file: truncation, flips, lying array and node headers."""
    b = bytearray(data)
    how = r.randrange(4)
    if how == 0:
        return bytes(b[:r.randrange(27, len(b))]), 'truncated'
    if how == 1:
        for _ in range(r.randrange(1, 16)):
            b[r.randrange(27, len(b))] ^= 1 << r.randrange(8)
        return bytes(b), 'bit flips'
    if how == 2:  # an array's count or byte size lies
        starts = [i for i in range(27, len(b) - 13) if chr(b[i]) in ARRAYS and b[i + 5:i + 9] == b'\0\0\0\0'][:5000]
        if starts:
            i = r.choice(starts)
            field = r.choice([1, 9])
            struct.pack_into('<I', b, i + field, r.choice([0, 2 ** 31, 2 ** 32 - 1, 10 ** 6]))
        return bytes(b), 'an array header lies'
    i = r.randrange(27, len(b) - 4)
    struct.pack_into('<I', b, i, r.choice([0, 1, len(b) + 1, 2 ** 32 - 1]))
    return bytes(b), 'a 32-bit field overwritten'


def apply(r, operators, subject):
    """One operator on the subject; an operator whose anchor an earlier one removed does nothing."""
    op = r.choice(operators)
    try:
        return op(r, subject)
    except (StopIteration, ValueError, IndexError):
        return op.__name__ + ' (nothing to change)'


def fbx_mutation(r, tree):
    version, nodes, footer = tree
    nodes = copy.deepcopy(nodes)
    what = []
    for _ in range(r.choice([1, 1, 2])):
        what.append(apply(r, FBX_TREE_MUTATIONS, nodes))
    data = write_fbx(version, nodes, footer)
    if r.random() < 0.3:
        data, raw = fbx_raw_mutation(r, data)
        what.append(raw)
    return data, '; '.join(what)


# --- BVH mutations ------------------------------------------------------------------------------------

def b_frames(r, lines):
    i = next(k for k, l in enumerate(lines) if l.startswith('Frames:'))
    lines[i] = 'Frames: ' + r.choice(['0', '1', '20', '2751', '2753', '99999', '4294967295', '-1', 'x', ''])
    return 'Frames: changed'


def b_frame_time(r, lines):
    i = next(k for k, l in enumerate(lines) if l.startswith('Frame Time:'))
    lines[i] = 'Frame Time: ' + r.choice(['0', 'nan', '1e39', '-0.0083333', 'inf', '', '1e-30', 'fast'])
    return 'Frame Time: changed'


def motion_start(lines):
    return next(k for k, l in enumerate(lines) if l.startswith('Frame Time:')) + 1


def b_values(r, lines):
    m = motion_start(lines)
    for _ in range(r.randrange(1, 30)):
        i = r.randrange(m, len(lines))
        words = lines[i].split()
        if words:
            words[r.randrange(len(words))] = r.choice(['nan', 'inf', '-inf', '1.#IND', '1e39', 'abc', '', '1e400',
                                                       '--1', '0x10', '9' * 400])
            lines[i] = ' '.join(words)
    return 'frame values replaced'


def b_rows(r, lines):
    m = motion_start(lines)
    how = r.randrange(4)
    if how == 0:
        del lines[r.randrange(m, len(lines)):]
    elif how == 1:
        i = r.randrange(m, len(lines))
        lines[i] = ' '.join(lines[i].split()[:r.randrange(0, 96)])
    elif how == 2:
        i = r.randrange(m, len(lines))
        lines[i] += ' 1' * r.randrange(1, 200000)
    else:
        i = r.randrange(m, len(lines))
        lines[i:i] = [lines[i]] * r.randrange(1, 500)
    return 'frame rows changed (%d)' % how


def b_hierarchy(r, lines):
    m = next(k for k, l in enumerate(lines) if l.strip() == 'MOTION')
    how = r.randrange(8)
    i = r.randrange(1, m)
    if how == 0:
        lines[i] = lines[i].replace('{', '').replace('}', '')
    elif how == 1:
        lines.insert(i, r.choice(['{', '}', '}}}', '{{']))
    elif how == 2:
        lines[i] = lines[i].replace('CHANNELS 3', 'CHANNELS ' + r.choice(['7', '0', '2', '4294967295', 'x']))
    elif how == 3:
        lines[i] = lines[i].replace('Xrotation', r.choice(['Xscale', 'Yrotation', 'Zrotation', 'Wrotation', '']))
    elif how == 4:
        lines[i] = lines[i].replace('OFFSET', r.choice(['', 'OFFSET nan', 'OFFSET 1e39', 'OFFSET 1 2 3 4']))
    elif how == 5:
        lines[i] = lines[i].replace('JOINT', r.choice(['ROOT', 'JOINT Hips\n', 'End Site', '']))
    elif how == 6:
        lines[i] = lines[i].replace('End Site', r.choice(['End', 'JOINT x', 'End Site\n{\nCHANNELS 1 Xrotation']))
    else:
        del lines[i:i + r.randrange(1, 20)]
    return 'hierarchy changed (%d)' % how


def b_deep(r, lines):
    depth = r.choice([25000, 100000])
    i = next(k for k, l in enumerate(lines) if 'End Site' in l)
    chain = []
    for k in range(depth):
        chain.append('JOINT deep%d { OFFSET 0 0.01 0 CHANNELS 0' % k)
    lines[i:i] = chain + ['}' * depth]
    return '%d nested joints' % depth


def b_encoding(r, lines):
    how = r.randrange(3)
    if how == 0:
        lines[:] = [l.replace(' ', '\t') for l in lines]
    elif how == 1:
        lines[:] = [l + '\r' for l in lines]
    else:
        lines[:] = [l + '\r' for l in lines[:len(lines) // 2]] + lines[len(lines) // 2:]
    return 'white space and line ends changed (%d)' % how


BVH_MUTATIONS = [b_frames, b_frame_time, b_values, b_rows, b_hierarchy, b_deep, b_encoding]


def bvh_mutation(r, text):
    lines = text.split('\n')
    what = [apply(r, BVH_MUTATIONS, lines) for _ in range(r.choice([1, 1, 2, 3]))]
    data = '\n'.join(lines).encode('latin1')
    if r.random() < 0.2:
        b = bytearray(data)
        if r.random() < 0.5:
            data = bytes(b[:r.randrange(0, len(b))])
            what.append('truncated')
        else:
            for _ in range(r.randrange(1, 16)):
                b[r.randrange(len(b))] = r.randrange(256)
            data = bytes(b)
            what.append('bytes replaced')
    return data, '; '.join(what)


# --- glTF and GLB: the JSON document mutated, written back in the input's container ---------------

def read_gltf(data):
    """(document, binary chunk or None, is_glb)."""
    import json
    if data[:4] == b'glTF':
        length = struct.unpack_from('<I', data, 12)[0]
        doc = json.loads(data[20:20 + length].decode('utf-8'))
        rest = 20 + length
        binary = None
        if rest + 8 <= len(data):
            blength = struct.unpack_from('<I', data, rest)[0]
            binary = data[rest + 8:rest + 8 + blength]
        return doc, binary, True
    return json.loads(data.decode('utf-8')), None, False


def write_gltf(doc, binary, glb, base_dir):
    import json
    if not glb:
        # External buffers of a .gltf are embedded (the mutated file lives elsewhere).
        for b in doc.get('buffers', []):
            uri = b.get('uri')
            if isinstance(uri, str) and not uri.startswith('data:'):
                path = os.path.join(base_dir, uri)
                if os.path.exists(path):
                    import base64
                    b['uri'] = 'data:application/octet-stream;base64,' + base64.b64encode(
                        open(path, 'rb').read()).decode('ascii')
        return json.dumps(doc).encode('utf-8')
    text = json.dumps(doc).encode('utf-8')
    text += b' ' * ((4 - len(text) % 4) % 4)
    out = struct.pack('<III', 0x46546C67, 2, 0) + struct.pack('<II', len(text), 0x4E4F534A) + text
    if binary is not None:
        pad = binary + b'\0' * ((4 - len(binary) % 4) % 4)
        out += struct.pack('<II', len(pad), 0x004E4942) + pad
    return out[:8] + struct.pack('<I', len(out)) + out[12:]


def g_pick(r, doc, key):
    items = doc.get(key)
    return (r.randrange(len(items)), items) if isinstance(items, list) and items else (None, None)


def g_counts(r, doc):
    i, items = g_pick(r, doc, 'accessors')
    if i is None:
        return 'no accessors'
    v = r.choice([0, 1, items[i].get('count', 1) + 1, 2 ** 31, 2 ** 32 + 1, -1, 1e30])
    items[i]['count'] = v
    return 'accessors[%d].count = %r' % (i, v)


def g_offsets(r, doc):
    key = r.choice(['accessors', 'bufferViews'])
    i, items = g_pick(r, doc, key)
    if i is None:
        return 'no %s' % key
    field = 'byteOffset' if r.random() < 0.6 else ('byteStride' if key == 'bufferViews' else 'bufferView')
    v = r.choice([3, 2 ** 31, 2 ** 32 - 1, -4, 1 << 40])
    items[i][field] = v
    return '%s[%d].%s = %r' % (key, i, field, v)


def g_types(r, doc):
    i, items = g_pick(r, doc, 'accessors')
    if i is None:
        return 'no accessors'
    if r.random() < 0.5:
        v = r.choice([5120, 5121, 5122, 5123, 5125, 5126, 5124, 7])
        items[i]['componentType'] = v
        return 'accessors[%d].componentType = %d' % (i, v)
    v = r.choice(['SCALAR', 'VEC2', 'VEC3', 'VEC4', 'MAT4', 'MAT2', 'BAD'])
    items[i]['type'] = v
    return 'accessors[%d].type = %s' % (i, v)


def g_indices(r, doc):
    """A reference to another object made out of range, or a field removed."""
    choices = []
    for n, node in enumerate(doc.get('nodes', [])):
        for f in ('skin', 'mesh'):
            if f in node:
                choices.append((node, f, 'nodes[%d].%s' % (n, f)))
    for s, skin in enumerate(doc.get('skins', [])):
        choices.append((skin, 'inverseBindMatrices', 'skins[%d].inverseBindMatrices' % s))
        if skin.get('joints'):
            choices.append((skin['joints'], r.randrange(len(skin['joints'])), 'skins[%d].joints[]' % s))
    for a, anim in enumerate(doc.get('animations', [])):
        for c, ch in enumerate(anim.get('channels', [])):
            choices.append((ch, 'sampler', 'animations[%d].channels[%d].sampler' % (a, c)))
            choices.append((ch.get('target', {}), 'node', 'animations[%d].channels[%d].target.node' % (a, c)))
        for k, smp in enumerate(anim.get('samplers', [])):
            choices.append((smp, r.choice(['input', 'output']), 'animations[%d].samplers[%d]' % (a, k)))
    if not choices:
        return 'nothing to index'
    obj, field, where = r.choice(choices)
    if r.random() < 0.3 and isinstance(obj, dict):
        obj.pop(field, None)
        return where + ' removed'
    v = r.choice([99, -1, 2 ** 31, 0])
    obj[field] = v
    return '%s = %r' % (where, v)


def g_hierarchy(r, doc):
    nodes = doc.get('nodes')
    if not nodes:
        return 'no nodes'
    how = r.randrange(3)
    if how == 0:  # a cycle
        a, b = r.randrange(len(nodes)), r.randrange(len(nodes))
        nodes[a].setdefault('children', []).append(b)
        nodes[b].setdefault('children', []).append(a)
        return 'nodes %d and %d each other\'s child' % (a, b)
    if how == 1:  # a node two parents share
        a = r.randrange(len(nodes))
        for p in range(len(nodes)):
            if p != a and r.random() < 0.3:
                nodes[p].setdefault('children', []).append(a)
        return 'node %d given several parents' % a
    depth = r.choice([1000, 20000])  # a deep chain under the first scene's root
    first = len(nodes)
    for k in range(depth):
        nodes.append({'name': 'deep%d' % k, 'translation': [0, 0.001, 0]})
        if k:
            nodes[first + k - 1]['children'] = [first + k]
    roots = doc.get('scenes', [{}])[doc.get('scene', 0) if isinstance(doc.get('scene', 0), int) else 0] \
        .setdefault('nodes', []) if doc.get('scenes') else None
    if roots is not None:
        roots.append(first)
    return 'a chain %d nodes deep' % depth


def g_values(r, doc):
    how = r.randrange(3)
    if how == 0:
        i, items = g_pick(r, doc, 'nodes')
        if i is None:
            return 'no nodes'
        f = r.choice(['translation', 'rotation', 'scale', 'matrix'])
        n = {'translation': 3, 'rotation': 4, 'scale': 3, 'matrix': 16}[f]
        items[i][f] = [r.choice([1e39, -1e39, 0.0, 1e-45, 'x']) for _ in range(r.choice([n, n - 1, n + 1]))]
        return 'nodes[%d].%s replaced' % (i, f)
    if how == 1:
        for anim in doc.get('animations', []):
            for smp in anim.get('samplers', []):
                smp['interpolation'] = r.choice(['STEP', 'CUBICSPLINE', 'LINEAR', 'SQUAD', 7])
        return 'every sampler\'s interpolation changed'
    i, items = g_pick(r, doc, 'accessors')
    if i is None:
        return 'no accessors'
    items[i]['sparse'] = {'count': r.choice([1, 2 ** 30]), 'indices': {'bufferView': 0, 'componentType': 5125},
                          'values': {'bufferView': 0}}
    return 'accessors[%d] given a sparse section' % i


GLTF_MUTATIONS = [g_counts, g_offsets, g_types, g_indices, g_hierarchy, g_values]


def gltf_mutation(r, source):
    doc, binary, glb, base_dir = source
    doc = copy.deepcopy(doc)
    what = [r.choice(GLTF_MUTATIONS)(r, doc) for _ in range(r.choice([1, 1, 2]))]
    data = write_gltf(doc, binary, glb, base_dir)
    if r.random() < 0.2:
        b = bytearray(data)
        if glb and r.random() < 0.5:  # chunk lengths that claim gigabytes
            struct.pack_into('<I', b, r.choice([8, 12]), r.choice([2 ** 31, 2 ** 32 - 4, 24]))
            what.append('GLB length claims changed')
        elif r.random() < 0.5:
            b = b[:r.randrange(0, len(b))]
            what.append('truncated')
        else:
            for _ in range(r.randrange(1, 16)):
                b[r.randrange(len(b))] = r.randrange(256)
            what.append('bytes replaced')
        data = bytes(b)
    return data, '; '.join(what)


# --- running the tool -----------------------------------------------------------------------------------

SANITIZER_MARKS = ('AddressSanitizer', 'UndefinedBehaviorSanitizer', 'LeakSanitizer', 'runtime error:',
                   'MemorySanitizer', 'ThreadSanitizer')


def tool_environment(sanitized, memory_mib):
    """A sanitized tool keeps its reports for memory errors, but a crash (of assimp, in the tool's
    own child process) is a plain signal there, which the tool reports as assimp's crash, and no
    single allocation may pass the memory limit (ASan reserves terabytes of address space, so the
    address-space limit cannot be used)."""
    env = dict(os.environ)
    if sanitized:
        extra = ('handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_abort=0:allocator_may_return_null=1:'
                 'max_allocation_size_mb=%d' % (memory_mib * 3 // 4))
        env['ASAN_OPTIONS'] = (env['ASAN_OPTIONS'] + ':' if env.get('ASAN_OPTIONS') else '') + extra
    return env


def run_tool(tool, args, seconds, memory_mib, sanitized):
    def limit():
        if not sanitized:  # (ASan reserves terabytes of address space)
            resource.setrlimit(resource.RLIMIT_AS, (memory_mib << 20, memory_mib << 20))
    start = time.monotonic()
    try:
        p = subprocess.run([tool] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           preexec_fn=limit, timeout=seconds, env=tool_environment(sanitized, memory_mib))
    except subprocess.TimeoutExpired:
        return None, '', time.monotonic() - start
    return p.returncode, p.stderr.decode('latin1'), time.monotonic() - start


def check(kind, path, code, err, elapsed, seconds):
    """Why a run failed, or None."""
    if code is None:
        return 'no answer within %g s' % seconds
    if code < 0:
        return 'ended by signal %d' % -code
    for mark in SANITIZER_MARKS:
        if mark in err:
            return 'sanitizer report (%s)' % mark
    if code not in (0, 1):
        return 'exit code %d' % code
    if code == 1:
        if path not in err:
            return 'exit 1 without naming the file'
        if kind == 'bvh' and 'line ' not in err and 'not a BVH file' not in err and 'cannot read' not in err \
                and 'max_' not in err and 'too many' not in err:
            return 'exit 1 without a place (line) in the message'
        if kind in ('gltf', 'glb') and not any(m in err for m in (': /', 'byte offset', 'not a glTF', 'cannot read',
                                                                  'max_', 'too many', 'JSON')):
            return 'exit 1 without a place (a JSON pointer or a byte offset) in the message'
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--tool', required=True)
    ap.add_argument('--formats', default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                      '..', '..', 'shared', 'data', 'formats'))
    ap.add_argument('--work', default='mutations')
    ap.add_argument('--count', type=int, default=40, help='mutations per source file')
    ap.add_argument('--seed', type=int, default=28)
    ap.add_argument('--sanitized', action='store_true', help='the tool is built with sanitizers')
    ap.add_argument('--seconds', type=float, default=10.0, help='time limit of a run')
    ap.add_argument('--memory-mib', type=int, default=1024, help='address-space limit of a run')
    a = ap.parse_args()

    bvh_path = os.path.join(a.formats, '01_01.bvh')
    fbx_path = os.path.join(a.formats, 'animation_with_skeleton.fbx')
    if not (os.path.exists(bvh_path) and os.path.exists(fbx_path)):
        if os.environ.get('KEYBLEND_REQUIRE_DATA') == '1':
            print('mutate_formats: required test data is missing: %s' % a.formats, file=sys.stderr)
            return 1
        print('KEYBLEND-SKIP: %s not found; mutations skipped' % a.formats)
        return 0
    os.makedirs(a.work, exist_ok=True)
    r = random.Random(a.seed)
    bvh_text = open(bvh_path, 'rb').read().decode('latin1')
    fbx_tree = read_fbx(open(fbx_path, 'rb').read())
    if write_fbx(*fbx_tree) is None:
        return 1
    gltf_sources = []
    for folder in (a.formats, os.path.join(a.formats, 'khronos')):
        if os.path.isdir(folder):
            for name in sorted(os.listdir(folder)):
                if name.endswith(('.gltf', '.glb')):
                    path = os.path.join(folder, name)
                    doc, binary, glb = read_gltf(open(path, 'rb').read())
                    gltf_sources.append((doc, binary, glb, folder))
    kinds = ['bvh', 'fbx'] + ['gltf%d' % k for k in range(len(gltf_sources))]
    # The tool's own limits on assimp's process stay below this script's, so that they act first.
    inner = ['--max-seconds', str(max(1.0, a.seconds / 2)), '--max-memory', str(max(64, a.memory_mib * 3 // 4))]
    failures = []
    tally = {}
    start = time.monotonic()
    for i in range(len(kinds) * a.count):
        kind = kinds[i % len(kinds)]
        if kind == 'bvh':
            data, what = bvh_mutation(r, bvh_text)
        elif kind == 'fbx':
            data, what = fbx_mutation(r, fbx_tree)
        else:
            source = gltf_sources[int(kind[4:])]
            data, what = gltf_mutation(r, source)
            kind = 'glb' if source[2] else 'gltf'
        path = os.path.abspath(os.path.join(a.work, 'm%04d.%s' % (i, kind)))
        with open(path, 'wb') as f:
            f.write(data)
        png = path + '.png'
        ok = True
        commands = [['info', path] + inner, ['render', path, '--frames', '1', '--size', '32x32', '--out', png] + inner]
        if kind in ('bvh', 'gltf', 'glb'):  # (strict: every problem is an error, and each must name its place)
            commands.append(['info', path, '--strict'])
        for args in commands:
            code, err, elapsed = run_tool(a.tool, args, a.seconds, a.memory_mib, a.sanitized)
            tally[(kind, code)] = tally.get((kind, code), 0) + 1
            why = check(kind, path, code, err, elapsed, a.seconds)
            if why:
                ok = False
                failures.append('%s %s: %s (%s)\n    %s' % (args[0], path, why, what,
                                                        err.strip().replace('\n', '\n    ')[-2000:]))
        if ok:
            for p in (path, png):
                if os.path.exists(p):
                    os.remove(p)
    elapsed = time.monotonic() - start
    summary = ', '.join('%s exit %s: %d' % (k, 'timeout' if c is None else c, n) for (k, c), n in sorted(
        tally.items(), key=lambda t: (t[0][0], -1 if t[0][1] is None else t[0][1])))
    print('mutate_formats: %d mutations (seed %d) in %.1f s; %s' % (len(kinds) * a.count, a.seed, elapsed, summary))
    for f in failures:
        print('FAILED ' + f, file=sys.stderr)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
