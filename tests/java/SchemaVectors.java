// Golden protocol vectors from Apache Kafka's own schema machinery (kafka-clients 4.3.1).
//
// For every API key weir serves, every version from ApiMessageType.lowestSupportedVersion() to
// highestSupportedVersion(true) (unstable latest versions included), and for both request and
// response, this builds a randomly filled org.apache.kafka.common.protocol.types.Struct that
// matches the version's Schema and writes it with Schema.write. Internal records (group and
// transaction coordinator records, KRaft metadata records) get the same treatment through their
// generated classes' static SCHEMAS arrays.
//
// Every sample is then read back twice before it is accepted: with the same Schema (must consume
// every byte) and with Kafka's generated message class (must consume every byte and re-encode to the
// very same bytes). The second check rejects encodings that are valid but not canonical, e.g. a
// tagged field present with its default value, which the generated encoders would leave out; such
// a sample is regenerated with fresh randomness.
//
// Output, one sample a line (lines starting with '#' are comments):
//   req|resp <api_key> <version> <hex of the message body>
//   data <MessageName> <version> <hex>
//
// Usage:
//   java -cp "$(cat .cache/kafka/cp.txt):.cache/java" SchemaVectors --seed N --samples K --out FILE
//        [--keys 0,1,18] [--no-data] [--unknown-tags] [--verbose]
//   java ... SchemaVectors --check FILE [--out FILTERED]
//     Reads a vector file made elsewhere (e.g. by kmsgvectors) and checks each req/resp line the
//     same way (Kafka's generated classes parse it completely and re-encode it identically).
//     Prints problems and a summary to stderr; exits 1 if any line fails. With --out, writes a
//     copy of FILE in which failing lines are turned into '#' comments saying why.

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.reflect.Constructor;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Supplier;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.ApiMessageType;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Message;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.protocol.types.BoundField;
import org.apache.kafka.common.protocol.types.RawTaggedField;
import org.apache.kafka.common.protocol.types.Schema;
import org.apache.kafka.common.protocol.types.Struct;
import org.apache.kafka.common.protocol.types.TaggedFields;
import org.apache.kafka.common.protocol.types.Type;
import org.apache.kafka.common.record.internal.MemoryRecords;

public final class SchemaVectors {

    /** API keys weir serves (same list as tests/go/kmsgvectors), then ListConfigResources (74,
     *  served, Java samples only) and the ones a weir broker sends to a KRaft controller or
     *  forwards (Java samples only). */
    static final int[] KEYS = {
        0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28,
        29, 30, 31, 32, 33, 35, 36, 37, 42, 43, 44, 46, 47, 48, 49, 50, 51, 60, 61, 65, 66, 68, 69, 75,
        74, 45, 55, 56, 57, 58, 59, 62, 63, 67,
    };

    /** Internal records, emitted as "data" lines. */
    static final String[] DATA_CLASSES = {
        "org.apache.kafka.coordinator.group.generated.OffsetCommitKey",
        "org.apache.kafka.coordinator.group.generated.OffsetCommitValue",
        "org.apache.kafka.coordinator.group.generated.GroupMetadataKey",
        "org.apache.kafka.coordinator.group.generated.GroupMetadataValue",
        "org.apache.kafka.coordinator.transaction.generated.TransactionLogKey",
        "org.apache.kafka.coordinator.transaction.generated.TransactionLogValue",
        "org.apache.kafka.common.metadata.TopicRecord",
        "org.apache.kafka.common.metadata.PartitionRecord",
        "org.apache.kafka.common.metadata.PartitionChangeRecord",
        "org.apache.kafka.common.metadata.RemoveTopicRecord",
        "org.apache.kafka.common.metadata.ConfigRecord",
        "org.apache.kafka.common.metadata.ProducerIdsRecord",
        "org.apache.kafka.common.metadata.RegisterBrokerRecord",
        "org.apache.kafka.common.metadata.FeatureLevelRecord",
        "org.apache.kafka.common.metadata.NoOpRecord",
        "org.apache.kafka.common.metadata.UnregisterBrokerRecord",
        "org.apache.kafka.common.metadata.FenceBrokerRecord",
        "org.apache.kafka.common.metadata.UnfenceBrokerRecord",
        "org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord",
        "org.apache.kafka.common.metadata.AccessControlEntryRecord",
        "org.apache.kafka.common.metadata.RemoveAccessControlEntryRecord",
        "org.apache.kafka.common.metadata.DelegationTokenRecord",
        "org.apache.kafka.common.metadata.RemoveDelegationTokenRecord",
        "org.apache.kafka.common.metadata.UserScramCredentialRecord",
        "org.apache.kafka.common.metadata.RemoveUserScramCredentialRecord",
        "org.apache.kafka.common.metadata.ClientQuotaRecord",
        "org.apache.kafka.common.metadata.ZkMigrationStateRecord",
        "org.apache.kafka.common.metadata.BeginTransactionRecord",
        "org.apache.kafka.common.metadata.EndTransactionRecord",
        "org.apache.kafka.common.metadata.AbortTransactionRecord",
        "org.apache.kafka.common.metadata.RegisterControllerRecord",
        "org.apache.kafka.common.metadata.ClearElrRecord",
        "org.apache.kafka.common.message.LeaderChangeMessage",
        "org.apache.kafka.common.message.SnapshotHeaderRecord",
        "org.apache.kafka.common.message.SnapshotFooterRecord",
        "org.apache.kafka.common.message.KRaftVersionRecord",
        "org.apache.kafka.common.message.VotersRecord",
    };

    static final int MAX_ATTEMPTS = 200;

    // Code points strings are drawn from: ASCII plus 2-, 3- and 4-byte UTF-8 sequences.
    static final int[] NON_ASCII = {0xe9, 0xdf, 0x3a9, 0x416, 0x5d0, 0x4e2d, 0x6587, 0x20ac, 0xfeff, 0x1f600, 0x1f680, 0x10348};

    // ---------------------------------------------------------------- statistics

    static final class Stats {
        long nulls, emptyArrays, nonEmptyArrays, taggedPresent, taggedAbsent, unknownTags, nullStructs;

        void add(Stats o) {
            nulls += o.nulls;
            emptyArrays += o.emptyArrays;
            nonEmptyArrays += o.nonEmptyArrays;
            taggedPresent += o.taggedPresent;
            taggedAbsent += o.taggedAbsent;
            unknownTags += o.unknownTags;
            nullStructs += o.nullStructs;
        }
    }

    /** Counts what a parsed message (a Struct from Schema.read) holds: what actually went on the wire. */
    @SuppressWarnings("unchecked")
    static void census(Object val, Type t, Stats s) {
        if (t instanceof TaggedFields) {
            Map<Integer, Object> m = (Map<Integer, Object>) val;
            Map<Integer, org.apache.kafka.common.protocol.types.Field> known = ((TaggedFields) t).fields();
            for (Map.Entry<Integer, org.apache.kafka.common.protocol.types.Field> e : known.entrySet()) {
                if (m.containsKey(e.getKey())) {
                    s.taggedPresent++;
                    census(m.get(e.getKey()), e.getValue().type, s);
                } else {
                    s.taggedAbsent++;
                }
            }
            for (Integer tag : m.keySet()) if (!known.containsKey(tag)) s.unknownTags++;
        } else if (val == null) {
            s.nulls++;
            if (t instanceof Schema) s.nullStructs++;
        } else if (t instanceof Schema) {
            Struct st = (Struct) val;
            for (BoundField bf : ((Schema) t).fields()) census(st.get(bf), bf.def.type, s);
        } else if (t.isArray()) {
            Object[] a = (Object[]) val;
            if (a.length == 0) s.emptyArrays++;
            else s.nonEmptyArrays++;
            Type elem = t.arrayElementType().get();
            for (Object o : a) census(o, elem, s);
        }
    }

    // ---------------------------------------------------------------- random values

    static final class Filler {
        final Random r;
        final boolean unknownTags;

        Filler(Random r, boolean unknownTags) {
            this.r = r;
            this.unknownTags = unknownTags;
        }

        /** A value in [min, max], drawn uniformly most of the time, otherwise an edge value. */
        long integer(long min, long max) {
            if (r.nextInt(6) == 0) {
                long[] edges = {0, 1, -1, min, max, min + 1, max - 1};
                long e = edges[r.nextInt(edges.length)];
                if (e >= min && e <= max) return e;
            }
            if (min == Long.MIN_VALUE && max == Long.MAX_VALUE) return r.nextLong();
            long span = max - min + 1; // callers never pass a span that overflows
            return min + Math.floorMod(r.nextLong(), span);
        }

        double float64() {
            if (r.nextInt(6) == 0) {
                double[] edges = {0.0, -0.0, 1.0, -1.5, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY,
                    Double.MAX_VALUE, Double.MIN_VALUE};
                return edges[r.nextInt(edges.length)];
            }
            while (true) {
                double d = Double.longBitsToDouble(r.nextLong());
                if (!Double.isNaN(d)) return d;
            }
        }

        String string() {
            int n = r.nextInt(13);
            StringBuilder sb = new StringBuilder();
            for (int i = 0; i < n; i++) {
                if (r.nextInt(4) == 0) sb.appendCodePoint(NON_ASCII[r.nextInt(NON_ASCII.length)]);
                else sb.append((char) (0x20 + r.nextInt(0x5f)));
            }
            return sb.toString();
        }

        byte[] bytes() {
            byte[] b = new byte[r.nextInt(13)];
            r.nextBytes(b);
            return b;
        }

        boolean makeNull() {
            return r.nextInt(5) == 0;
        }

        Object value(Type t) {
            if (t == Type.BOOLEAN) return r.nextBoolean();
            if (t == Type.INT8) return (byte) integer(Byte.MIN_VALUE, Byte.MAX_VALUE);
            if (t == Type.INT16) return (short) integer(Short.MIN_VALUE, Short.MAX_VALUE);
            if (t == Type.UINT16) return (int) integer(0, 0xffff);
            if (t == Type.INT32 || t == Type.VARINT) return (int) integer(Integer.MIN_VALUE, Integer.MAX_VALUE);
            if (t == Type.UNSIGNED_INT32) return integer(0, 0xffffffffL);
            if (t == Type.INT64 || t == Type.VARLONG) return integer(Long.MIN_VALUE, Long.MAX_VALUE);
            if (t == Type.FLOAT64) return float64();
            if (t == Type.UUID) {
                switch (r.nextInt(8)) {
                    case 0: return Uuid.ZERO_UUID;
                    case 1: return Uuid.ONE_UUID;
                    default: return new Uuid(r.nextLong(), r.nextLong());
                }
            }
            if (t == Type.STRING || t == Type.COMPACT_STRING) return string();
            if (t == Type.NULLABLE_STRING || t == Type.COMPACT_NULLABLE_STRING) return makeNull() ? null : string();
            if (t == Type.BYTES || t == Type.COMPACT_BYTES) return ByteBuffer.wrap(bytes());
            if (t == Type.NULLABLE_BYTES || t == Type.COMPACT_NULLABLE_BYTES)
                return makeNull() ? null : ByteBuffer.wrap(bytes());
            if (t == Type.RECORDS || t == Type.COMPACT_RECORDS)
                return MemoryRecords.readableRecords(ByteBuffer.wrap(bytes()));
            if (t == Type.NULLABLE_RECORDS || t == Type.COMPACT_NULLABLE_RECORDS)
                return makeNull() ? null : MemoryRecords.readableRecords(ByteBuffer.wrap(bytes()));
            if (t instanceof TaggedFields) return tagged((TaggedFields) t);
            if (t instanceof Schema) {
                if (t.isNullable() && makeNull()) return null;
                return struct((Schema) t);
            }
            if (t.isArray()) {
                if (t.isNullable() && makeNull()) return null;
                Type elem = t.arrayElementType().get();
                Object[] a = new Object[r.nextInt(4)];
                for (int i = 0; i < a.length; i++) a[i] = value(elem);
                return a;
            }
            throw new IllegalStateException("no generator for type " + t);
        }

        Struct struct(Schema s) {
            Struct st = new Struct(s);
            for (BoundField bf : s.fields()) st.set(bf, value(bf.def.type));
            return st;
        }

        NavigableMap<Integer, Object> tagged(TaggedFields t) {
            NavigableMap<Integer, Object> m = new TreeMap<>();
            for (Map.Entry<Integer, org.apache.kafka.common.protocol.types.Field> e : t.fields().entrySet()) {
                if (r.nextInt(3) != 0) m.put(e.getKey(), value(e.getValue().type));
            }
            if (unknownTags && r.nextInt(4) == 0) {
                int tag = 1000 + r.nextInt(1000);
                m.put(tag, new RawTaggedField(tag, bytes()));
            }
            return m;
        }
    }

    // ---------------------------------------------------------------- verification

    /** Returns null when the bytes are a complete, canonical encoding; otherwise why not. */
    static String verify(Schema schema, Supplier<Message> factory, short version, byte[] bytes, Stats stats) {
        Struct parsed;
        {
            ByteBuffer in = ByteBuffer.wrap(bytes);
            try {
                parsed = schema.read(in);
            } catch (RuntimeException e) {
                return "Schema.read failed: " + oneLine(e);
            }
            if (in.hasRemaining()) return "Schema.read left " + in.remaining() + " bytes";
        }
        Message m = factory.get();
        ByteBuffer in = ByteBuffer.wrap(bytes);
        try {
            m.read(new ByteBufferAccessor(in), version);
        } catch (RuntimeException e) {
            return m.getClass().getSimpleName() + ".read failed: " + oneLine(e);
        }
        if (in.hasRemaining()) return m.getClass().getSimpleName() + ".read left " + in.remaining() + " bytes";
        byte[] again;
        try {
            ObjectSerializationCache cache = new ObjectSerializationCache();
            int size = m.size(cache, version);
            ByteBuffer out = ByteBuffer.allocate(size);
            m.write(new ByteBufferAccessor(out), cache, version);
            if (out.hasRemaining()) return "generated write left " + out.remaining() + " bytes of its size";
            again = out.array();
        } catch (RuntimeException e) {
            return m.getClass().getSimpleName() + ".write failed: " + oneLine(e);
        }
        if (!Arrays.equals(bytes, again)) {
            return "not canonical: generated class re-encodes to " + firstDiff(bytes, again);
        }
        if (stats != null) census(parsed, schema, stats);
        return null;
    }

    static String firstDiff(byte[] a, byte[] b) {
        int i = 0;
        while (i < a.length && i < b.length && a[i] == b[i]) i++;
        return "different bytes (lengths " + a.length + " vs " + b.length + ", first difference at offset " + i + ")";
    }

    static String oneLine(Throwable e) {
        String s = e.getClass().getSimpleName() + ": " + e.getMessage();
        return s.replace('\n', ' ');
    }

    // ---------------------------------------------------------------- generation

    static final class Result {
        final List<String> lines = new ArrayList<>();
        final Stats stats = new Stats();
        int samples, retries, skipped;
        final Map<String, Integer> retryReasons = new TreeMap<>();

        void retry(String what, short version, String why) {
            retries++;
            retryReasons.merge(what + " v" + version + ": " + why, 1, Integer::sum);
        }
    }

    static long mix(long seed, String what, int version, int sample) {
        long h = seed * 0x9E3779B97F4A7C15L;
        for (byte b : what.getBytes(StandardCharsets.UTF_8)) h = (h ^ b) * 0x100000001B3L;
        h = (h ^ version) * 0xBF58476D1CE4E5B9L;
        h = (h ^ sample) * 0x94D049BB133111EBL;
        return h ^ (h >>> 31);
    }

    static void generate(Result res, String prefix, String what, Schema schema, Supplier<Message> factory,
                         short version, long seed, int samples, boolean unknownTags) {
        if (schema == null) {
            res.lines.add("# " + prefix + " " + version + " skipped: no schema for this version");
            res.skipped++;
            return;
        }
        for (int i = 0; i < samples; i++) {
            Random r = new Random(mix(seed, what, version, i));
            String lastWhy = null;
            boolean done = false;
            for (int attempt = 0; attempt < MAX_ATTEMPTS && !done; attempt++) {
                Filler f = new Filler(r, unknownTags);
                byte[] bytes;
                try {
                    Struct st = f.struct(schema);
                    int size = schema.sizeOf(st);
                    ByteBuffer buf = ByteBuffer.allocate(size);
                    schema.write(buf, st);
                    if (buf.hasRemaining()) throw new IllegalStateException("sizeOf and write disagree");
                    bytes = buf.array();
                } catch (RuntimeException e) {
                    lastWhy = "Schema.write failed: " + oneLine(e);
                    res.retry(prefix, version, lastWhy);
                    continue;
                }
                Stats st = new Stats();
                String why = verify(schema, factory, version, bytes, st);
                if (why != null) {
                    lastWhy = why;
                    res.retry(prefix, version, why);
                    continue;
                }
                res.lines.add(prefix + " " + version + " " + hex(bytes));
                res.stats.add(st);
                res.samples++;
                done = true;
            }
            if (!done) {
                res.lines.add("# " + prefix + " " + version + " sample " + i + " skipped after " + MAX_ATTEMPTS
                    + " attempts: " + lastWhy);
                res.skipped++;
            }
        }
    }

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(Character.forDigit((x >> 4) & 0xf, 16)).append(Character.forDigit(x & 0xf, 16));
        }
        return sb.toString();
    }

    static byte[] unhex(String s) {
        if (s.length() % 2 != 0) throw new IllegalArgumentException("odd hex length");
        byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16), lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) throw new IllegalArgumentException("bad hex digit");
            b[i] = (byte) (hi << 4 | lo);
        }
        return b;
    }

    static Supplier<Message> dataFactory(Class<?> c) throws ReflectiveOperationException {
        Constructor<?> ctor = c.getConstructor();
        return () -> {
            try {
                return (Message) ctor.newInstance();
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        };
    }

    static void printStats(String who, Stats s) {
        System.err.printf("%s: on the wire: nulls=%d (null structs %d), empty arrays=%d, non-empty arrays=%d,"
                + " tagged fields present=%d absent=%d, unknown tags=%d%n", who, s.nulls, s.nullStructs, s.emptyArrays,
            s.nonEmptyArrays, s.taggedPresent, s.taggedAbsent, s.unknownTags);
    }

    // ---------------------------------------------------------------- --check

    static Class<?> dataClass(String simpleName) throws ClassNotFoundException {
        for (String cn : DATA_CLASSES) {
            if (cn.endsWith("." + simpleName)) return Class.forName(cn);
        }
        throw new ClassNotFoundException("unknown data record " + simpleName);
    }

    static int check(String file, String filteredOut) throws IOException {
        List<String> in = Files.readAllLines(Paths.get(file), StandardCharsets.UTF_8);
        List<String> out = new ArrayList<>();
        int ok = 0, bad = 0, other = 0;
        Stats stats = new Stats();
        Map<String, Integer> badByKey = new TreeMap<>();
        for (String line : in) {
            String t = line.trim();
            if (t.isEmpty() || t.startsWith("#")) {
                out.add(line);
                continue;
            }
            String[] p = t.split(" ");
            if (p.length != 4 && !(p.length == 3)) {
                out.add("# malformed line: " + line);
                bad++;
                continue;
            }
            String why;
            if (p[0].equals("req") || p[0].equals("resp")) {
                try {
                    short key = Short.parseShort(p[1]);
                    short version = Short.parseShort(p[2]);
                    byte[] bytes = unhex(p.length == 4 ? p[3] : "");
                    ApiMessageType type = ApiMessageType.fromApiKey(key);
                    boolean req = p[0].equals("req");
                    Schema[] schemas = req ? type.requestSchemas() : type.responseSchemas();
                    if (version < type.lowestSupportedVersion() || version > type.highestSupportedVersion(true)
                            || version >= schemas.length) {
                        why = "version " + version + " outside Kafka's " + type.lowestSupportedVersion() + "-"
                            + type.highestSupportedVersion(true);
                    } else {
                        why = verify(schemas[version], req ? type::newRequest : type::newResponse, version, bytes,
                            stats);
                    }
                } catch (RuntimeException e) {
                    why = oneLine(e);
                }
            } else if (p[0].equals("data")) {
                try {
                    Class<?> c = dataClass(p[1]);
                    short version = Short.parseShort(p[2]);
                    Schema[] schemas = (Schema[]) c.getField("SCHEMAS").get(null);
                    if (version < 0 || version >= schemas.length || schemas[version] == null) {
                        why = "no schema for " + p[1] + " version " + version;
                    } else {
                        why = verify(schemas[version], dataFactory(c), version, unhex(p.length == 4 ? p[3] : ""), stats);
                    }
                } catch (ReflectiveOperationException | RuntimeException e) {
                    why = oneLine(e);
                }
            } else {
                other++;
                out.add(line);
                continue;
            }
            if (why == null) {
                ok++;
                out.add(line);
            } else {
                bad++;
                badByKey.merge(p[0] + " " + p[1] + " " + p[2], 1, Integer::sum);
                System.err.println("check: " + p[0] + " " + p[1] + " " + p[2] + ": " + why);
                out.add("# rejected by Kafka 4.3.1 (" + why + "): " + line);
            }
        }
        System.err.println("check " + file + ": " + ok + " accepted, " + bad + " rejected"
            + (other > 0 ? ", " + other + " lines of unknown kind not checked" : "")
            + (badByKey.isEmpty() ? "" : " " + badByKey));
        printStats("check", stats);
        if (filteredOut != null) Files.write(Paths.get(filteredOut), out, StandardCharsets.UTF_8);
        return bad == 0 ? 0 : 1;
    }

    // ---------------------------------------------------------------- main

    static void usage(String msg) {
        System.err.println(msg);
        System.err.println("usage: SchemaVectors --seed N --samples K --out FILE [--keys 0,1,...] [--no-data] [--unknown-tags] [--verbose]");
        System.err.println("       SchemaVectors --check FILE [--out FILTERED]");
        System.exit(2);
    }

    public static void main(String[] args) throws Exception {
        long seed = 1;
        int samples = 4;
        String outFile = null, checkFile = null;
        Set<Integer> keyFilter = null;
        boolean data = true, unknownTags = false, verbose = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--seed": seed = Long.parseLong(args[++i]); break;
                case "--samples": samples = Integer.parseInt(args[++i]); break;
                case "--out": outFile = args[++i]; break;
                case "--check": checkFile = args[++i]; break;
                case "--keys":
                    keyFilter = new LinkedHashSet<>();
                    for (String k : args[++i].split(",")) if (!k.isEmpty()) keyFilter.add(Integer.parseInt(k.trim()));
                    break;
                case "--no-data": data = false; break;
                case "--unknown-tags": unknownTags = true; break;
                case "--verbose": verbose = true; break;
                default: usage("unknown argument " + a);
            }
        }
        if (checkFile != null) System.exit(check(checkFile, outFile));
        if (outFile == null) usage("--out is required");
        if (samples < 1) usage("--samples must be >= 1");

        Result res = new Result();
        StringBuilder ranges = new StringBuilder();
        int combos = 0;
        for (int key : KEYS) {
            if (keyFilter != null && !keyFilter.contains(key)) continue;
            ApiMessageType type = ApiMessageType.fromApiKey((short) key);
            short lo = type.lowestSupportedVersion(), hi = type.highestSupportedVersion(true);
            ranges.append(String.format("# %-32s key=%-3d versions=%d-%d%s%n", type.name(), key, lo, hi,
                type.latestVersionUnstable() ? " (v" + hi + " unstable)" : ""));
            for (short v = lo; v <= hi; v++) {
                Schema[] req = type.requestSchemas(), resp = type.responseSchemas();
                generate(res, "req " + key, "req" + key, v < req.length ? req[v] : null, type::newRequest, v,
                    seed, samples, unknownTags);
                generate(res, "resp " + key, "resp" + key, v < resp.length ? resp[v] : null, type::newResponse, v,
                    seed, samples, unknownTags);
                combos += 2;
            }
        }
        int dataCombos = 0;
        if (data) {
            for (String cn : DATA_CLASSES) {
                Class<?> c = Class.forName(cn);
                Schema[] schemas = (Schema[]) c.getField("SCHEMAS").get(null);
                Supplier<Message> factory = dataFactory(c);
                String name = c.getSimpleName();
                int n = 0;
                for (short v = 0; v < schemas.length; v++) {
                    if (schemas[v] == null) continue;
                    generate(res, "data " + name, "data" + name, schemas[v], factory, v, seed, samples, unknownTags);
                    dataCombos++;
                    n++;
                }
                ranges.append(String.format("# data %-27s %d schema versions (SCHEMAS.length=%d)%n", name, n, schemas.length));
            }
        }

        Path p = Paths.get(outFile);
        if (p.getParent() != null) Files.createDirectories(p.getParent());
        try (BufferedWriter bw = Files.newBufferedWriter(p, StandardCharsets.UTF_8);
             PrintWriter w = new PrintWriter(bw)) {
            w.println("# weir golden protocol vectors from Apache Kafka's generic schema writer (kafka-clients "
                + org.apache.kafka.common.utils.AppInfoParser.getVersion() + ")");
            w.println("# seed=" + seed + " samples=" + samples + (unknownTags ? " unknown-tags" : ""));
            w.println("# format: req|resp <api_key> <version> <hex body>  |  data <MessageName> <version> <hex>");
            w.print(ranges);
            for (String l : res.lines) w.println(l);
        }
        Stats s = res.stats;
        long reqLines = res.lines.stream().filter(l -> l.startsWith("req ")).count();
        long respLines = res.lines.stream().filter(l -> l.startsWith("resp ")).count();
        long dataLines = res.lines.stream().filter(l -> l.startsWith("data ")).count();
        System.err.printf("java: %d (kind,key,version) + %d (data,record,version) combinations; lines: req=%d resp=%d data=%d;"
                + " skipped=%d, regenerated attempts=%d%n", combos, dataCombos, reqLines, respLines, dataLines,
            res.skipped, res.retries);
        printStats("java", s);
        if (verbose) res.retryReasons.forEach((k, n) -> System.err.println("java: regenerated " + n + "x " + k));
        if (res.skipped > 0) System.exit(1);
    }

    private SchemaVectors() {}
}
