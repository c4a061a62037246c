// SPDX-License-Identifier: Apache-2.0
// KeyshiftJavaOracle: what the Java client (kafka-clients) does with a key.
//
// Reads a corpus from stdin, one key per line as <type>:<value>, with type one
// of string, int32, int64, uuid, hex (empty lines and lines starting with '#'
// are skipped). Every key is serialized with Kafka's own serializer for that
// type and, in mode `keys`, hashed and partitioned through Kafka's own code
// (Utils.murmur2, Utils.toPositive, BuiltInPartitioner.partitionForKey, the
// very method KafkaProducer calls for a keyed record); in mode `produce` it is
// sent with a real KafkaProducer and the partition comes from RecordMetadata.
//
// Run `KeyshiftJavaOracle help` for the modes and options.

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UnsupportedEncodingException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.clients.producer.internals.BuiltInPartitioner;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.IntegerSerializer;
import org.apache.kafka.common.serialization.LongSerializer;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.common.serialization.UUIDSerializer;
import org.apache.kafka.common.utils.AppInfoParser;
import org.apache.kafka.common.utils.Utils;

public final class KeyshiftJavaOracle {

    static final String PROG = "KeyshiftJavaOracle";
    static final int[] DEFAULT_COUNTS = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 64};

    /** Bad input or bad command line: exit 2. */
    static final class UsageError extends Exception {
        UsageError(String msg) { super(msg); }
    }

    /** Anything that went wrong talking to Kafka: exit 1. */
    static final class RunError extends Exception {
        RunError(String msg, Throwable cause) { super(msg, cause); }
    }

    // ------------------------------------------------------------------ keys

    /** One parsed corpus line: its type, its value as Java sees it, and how Kafka serializes it. */
    static final class Key {
        final int line;
        final String type;
        final String text;          // the <value> part as given
        final Object value;         // String, Integer, Long, UUID or byte[]
        final Serializer<Object> serializer;
        final byte[] bytes;         // what the serializer produced

        Key(int line, String type, String text, Object value, Serializer<Object> serializer, byte[] bytes) {
            this.line = line; this.type = type; this.text = text; this.value = value;
            this.serializer = serializer; this.bytes = bytes;
        }
    }

    @SuppressWarnings("unchecked")
    static Serializer<Object> erase(Serializer<?> s) {
        return (Serializer<Object>) s;
    }

    // Kafka's own serializers, one per key type, configured as a producer
    // configures its key serializer (isKey = true).
    static final Map<String, Serializer<Object>> SERIALIZERS = new HashMap<>();
    static {
        SERIALIZERS.put("string", erase(new StringSerializer()));
        SERIALIZERS.put("int32", erase(new IntegerSerializer()));
        SERIALIZERS.put("int64", erase(new LongSerializer()));
        SERIALIZERS.put("uuid", erase(new UUIDSerializer()));
        SERIALIZERS.put("hex", erase(new ByteArraySerializer()));
        for (Serializer<Object> s : SERIALIZERS.values())
            s.configure(Collections.emptyMap(), true);
    }

    static Key parseKey(int lineNo, String line, String topic) throws UsageError {
        int colon = line.indexOf(':');
        if (colon < 0)
            throw new UsageError("line " + lineNo + ": expected <type>:<value>, got " + quote(line));
        String type = line.substring(0, colon);
        String text = line.substring(colon + 1);
        Serializer<Object> ser = SERIALIZERS.get(type);
        if (ser == null)
            throw new UsageError("line " + lineNo + ": unknown key type " + quote(type)
                    + " (expected string, int32, int64, uuid or hex)");
        Object value;
        try {
            switch (type) {
                case "string": value = text; break;
                case "int32": value = Integer.parseInt(text); break;
                case "int64": value = Long.parseLong(text); break;
                case "uuid": value = parseUuid(text); break;
                case "hex": value = parseHex(text); break;
                default: throw new AssertionError(type);
            }
        } catch (IllegalArgumentException e) {   // NumberFormatException is one
            throw new UsageError("line " + lineNo + ": bad " + type + " value " + quote(text)
                    + ": " + e.getMessage());
        }
        byte[] bytes = ser.serialize(topic, value);
        return new Key(lineNo, type, text, value, ser, bytes);
    }

    /** Canonical 8-4-4-4-12 hex form only (UUID.fromString accepts odd shorter forms). */
    static UUID parseUuid(String s) {
        if (!s.matches("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"))
            throw new IllegalArgumentException("not a canonical UUID (8-4-4-4-12 hex digits)");
        return UUID.fromString(s);
    }

    static byte[] parseHex(String s) {
        if (s.length() % 2 != 0)
            throw new IllegalArgumentException("odd number of hex digits");
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16);
            int lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0)
                throw new IllegalArgumentException("not a hex digit near offset " + (2 * i));
            out[i] = (byte) ((hi << 4) | lo);
        }
        return out;
    }

    static final char[] HEX = "0123456789abcdef".toCharArray();

    static String hex(byte[] b) {
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) sb.append(HEX[(x >> 4) & 15]).append(HEX[x & 15]);
        return sb.toString();
    }

    /** Reads all of stdin, strictly as UTF-8, and parses every key line. */
    static List<Key> readCorpus(InputStream in, String topic) throws UsageError, IOException {
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        in.transferTo(buf);
        CharsetDecoder dec = StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        String all;
        try {
            all = dec.decode(ByteBuffer.wrap(buf.toByteArray())).toString();
        } catch (CharacterCodingException e) {
            throw new UsageError("stdin is not valid UTF-8 (use hex:<bytes> for arbitrary bytes)");
        }
        List<Key> keys = new ArrayList<>();
        int lineNo = 0, start = 0;
        while (start < all.length()) {
            int nl = all.indexOf('\n', start);
            String line = nl < 0 ? all.substring(start) : all.substring(start, nl);
            start = nl < 0 ? all.length() : nl + 1;
            lineNo++;
            if (line.isEmpty() || line.startsWith("#"))
                continue;
            keys.add(parseKey(lineNo, line, topic));
        }
        return keys;
    }

    // ---------------------------------------------------------------- output

    static String quote(String s) {
        StringBuilder sb = new StringBuilder(s.length() + 2).append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                default:
                    if (c < 0x20) sb.append(String.format("\\u%04x", (int) c));
                    else sb.append(c);
            }
        }
        return sb.append('"').toString();
    }

    // ----------------------------------------------------------- arguments

    static final class Args {
        final String mode;
        final Map<String, String> opts = new HashMap<>();

        Args(String[] argv, String... allowed) throws UsageError {
            mode = argv[0];
            List<String> ok = List.of(allowed);
            for (int i = 1; i < argv.length; i++) {
                String a = argv[i];
                String name, val;
                if (!a.startsWith("--"))
                    throw new UsageError(mode + ": unexpected argument " + quote(a));
                int eq = a.indexOf('=');
                if (eq > 0) {
                    name = a.substring(2, eq);
                    val = a.substring(eq + 1);
                } else {
                    name = a.substring(2);
                    if (name.equals("if-not-exists")) {
                        val = "true";
                    } else {
                        if (i + 1 >= argv.length)
                            throw new UsageError(mode + ": option --" + name + " needs a value");
                        val = argv[++i];
                    }
                }
                if (!ok.contains(name))
                    throw new UsageError(mode + ": unknown option --" + name);
                opts.put(name, val);
            }
        }

        String get(String name, String dflt) { return opts.getOrDefault(name, dflt); }

        String need(String name) throws UsageError {
            String v = opts.get(name);
            if (v == null || v.isEmpty())
                throw new UsageError(mode + ": --" + name + " is required");
            return v;
        }

        int intOpt(String name, int dflt, int min) throws UsageError {
            String v = opts.get(name);
            if (v == null) return dflt;
            try {
                int n = Integer.parseInt(v);
                if (n < min) throw new NumberFormatException();
                return n;
            } catch (NumberFormatException e) {
                throw new UsageError(mode + ": --" + name + " must be an integer >= " + min + ", got " + quote(v));
            }
        }

        boolean json() throws UsageError {
            String f = get("format", "tsv");
            if (f.equals("tsv")) return false;
            if (f.equals("json")) return true;
            throw new UsageError(mode + ": --format must be tsv or json, got " + quote(f));
        }

        int[] counts() throws UsageError {
            String v = opts.get("counts");
            if (v == null) return DEFAULT_COUNTS;
            String[] parts = v.split(",", -1);
            int[] out = new int[parts.length];
            for (int i = 0; i < parts.length; i++) {
                try {
                    out[i] = Integer.parseInt(parts[i].trim());
                    if (out[i] < 1) throw new NumberFormatException();
                } catch (NumberFormatException e) {
                    throw new UsageError(mode + ": --counts wants positive integers separated by commas, got " + quote(v));
                }
            }
            return out;
        }
    }

    // ---------------------------------------------------------------- modes

    static void modeKeys(Args a, InputStream in, PrintStream out) throws Exception {
        boolean json = a.json();
        int[] counts = a.counts();
        List<Key> keys = readCorpus(in, a.get("topic", "keyshift"));
        if (!json) {
            StringBuilder h = new StringBuilder("#line\ttype\tserializer\tkey_hex\tmurmur2\tpositive");
            for (int n : counts) h.append("\tn=").append(n);
            out.println(h);
        }
        for (Key k : keys) {
            int m = Utils.murmur2(k.bytes);
            int pos = Utils.toPositive(m);
            StringBuilder sb = new StringBuilder();
            if (json) {
                sb.append("{\"line\":").append(k.line)
                  .append(",\"type\":\"").append(k.type).append('"')
                  .append(",\"value\":").append(quote(k.text))
                  .append(",\"serializer\":\"").append(k.serializer.getClass().getSimpleName()).append('"')
                  .append(",\"key_hex\":\"").append(hex(k.bytes)).append('"')
                  .append(",\"murmur2\":").append(m)
                  .append(",\"positive\":").append(pos)
                  .append(",\"partitions\":{");
                for (int i = 0; i < counts.length; i++) {
                    if (i > 0) sb.append(',');
                    sb.append('"').append(counts[i]).append("\":")
                      .append(BuiltInPartitioner.partitionForKey(k.bytes, counts[i]));
                }
                sb.append("}}");
            } else {
                sb.append(k.line).append('\t').append(k.type)
                  .append('\t').append(k.serializer.getClass().getSimpleName())
                  .append('\t').append(hex(k.bytes))
                  .append('\t').append(m).append('\t').append(pos);
                for (int n : counts)
                    sb.append('\t').append(BuiltInPartitioner.partitionForKey(k.bytes, n));
            }
            out.println(sb);
        }
    }

    /**
     * Key serializer for the producer: hands each key to the Kafka serializer
     * of its type, so KafkaProducer itself serializes (and then partitions) it.
     */
    public static final class TypedKeySerializer implements Serializer<Key> {
        @Override
        public byte[] serialize(String topic, Key key) {
            return key == null ? null : key.serializer.serialize(topic, key.value);
        }

        @Override
        public byte[] serialize(String topic, Headers headers, Key key) {
            return key == null ? null : key.serializer.serialize(topic, headers, key.value);
        }
    }

    static Properties clientProps(Args a) throws UsageError {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, a.need("bootstrap"));
        p.put(AdminClientConfig.CLIENT_ID_CONFIG, "keyshift-java-oracle");
        return p;
    }

    static void modeProduce(Args a, InputStream in, PrintStream out) throws Exception {
        boolean json = a.json();
        String topic = a.need("topic");
        int timeoutMs = a.intOpt("timeout-ms", 60000, 1000);
        List<Key> keys = readCorpus(in, topic);

        Properties p = clientProps(a);
        p.put(ProducerConfig.ACKS_CONFIG, a.get("acks", "all"));
        p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
        p.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, timeoutMs);
        p.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(30000, timeoutMs - 100));
        p.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, timeoutMs);
        // No partitioner.class, no partitioner.ignore.keys: the default
        // (built-in) partitioner, which hashes the serialized key.
        List<Future<RecordMetadata>> sent = new ArrayList<>(keys.size());
        int partitionCount;
        try (KafkaProducer<Key, String> producer =
                     new KafkaProducer<>(p, new TypedKeySerializer(), new StringSerializer())) {
            try {
                partitionCount = producer.partitionsFor(topic).size();
            } catch (Exception e) {
                throw new RunError("cannot get metadata of topic " + quote(topic) + " from " + a.need("bootstrap"), e);
            }
            for (Key k : keys)
                sent.add(producer.send(new ProducerRecord<>(topic, k, k.type + ":" + k.text)));
            producer.flush();
            if (!json)
                out.println("#line\ttype\tkey_hex\tpartition\toffset\tpartition_count");
            for (int i = 0; i < keys.size(); i++) {
                Key k = keys.get(i);
                RecordMetadata md;
                try {
                    md = sent.get(i).get(timeoutMs, TimeUnit.MILLISECONDS);
                } catch (ExecutionException e) {
                    throw new RunError("producing line " + k.line + " to " + quote(topic) + " failed", e.getCause());
                }
                if (json) {
                    out.println("{\"line\":" + k.line + ",\"type\":\"" + k.type + "\",\"value\":" + quote(k.text)
                            + ",\"key_hex\":\"" + hex(k.bytes) + "\",\"partition\":" + md.partition()
                            + ",\"offset\":" + md.offset() + ",\"partition_count\":" + partitionCount + "}");
                } else {
                    out.println(k.line + "\t" + k.type + "\t" + hex(k.bytes) + "\t" + md.partition()
                            + "\t" + md.offset() + "\t" + partitionCount);
                }
            }
        }
    }

    static Optional<TopicDescription> describe(Admin admin, String topic, int timeoutMs) throws Exception {
        try {
            return Optional.of(admin.describeTopics(List.of(topic)).allTopicNames()
                    .get(timeoutMs, TimeUnit.MILLISECONDS).get(topic));
        } catch (ExecutionException e) {
            if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException)
                return Optional.empty();
            throw e;
        }
    }

    static void modeCreateTopic(Args a, PrintStream out) throws Exception {
        String topic = a.need("topic");
        int partitions = a.intOpt("partitions", 1, 1);
        int timeoutMs = a.intOpt("timeout-ms", 60000, 1000);
        boolean ifNotExists = Boolean.parseBoolean(a.get("if-not-exists", "false"));
        try (Admin admin = Admin.create(clientProps(a))) {
            try {
                admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
                        .all().get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (!(ifNotExists && e.getCause() instanceof TopicExistsException))
                    throw new RunError("creating topic " + quote(topic) + " failed", e.getCause());
            }
            waitForPartitions(admin, topic, partitions, timeoutMs, ifNotExists);
            out.println(topic + "\t" + describe(admin, topic, timeoutMs).get().partitions().size());
        }
    }

    static void modeAddPartitions(Args a, PrintStream out) throws Exception {
        String topic = a.need("topic");
        int partitions = a.intOpt("partitions", 0, 1);
        if (partitions == 0) a.need("partitions");
        int timeoutMs = a.intOpt("timeout-ms", 60000, 1000);
        try (Admin admin = Admin.create(clientProps(a))) {
            try {
                admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(partitions)))
                        .all().get(timeoutMs, TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                throw new RunError("increasing " + quote(topic) + " to " + partitions + " partitions failed", e.getCause());
            }
            waitForPartitions(admin, topic, partitions, timeoutMs, false);
            out.println(topic + "\t" + partitions);
        }
    }

    /** Waits until the broker's metadata shows the topic with (at least) n partitions, all led. */
    static void waitForPartitions(Admin admin, String topic, int n, int timeoutMs, boolean atLeast) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true) {
            Optional<TopicDescription> d = describe(admin, topic, timeoutMs);
            if (d.isPresent()) {
                int have = d.get().partitions().size();
                boolean led = d.get().partitions().stream().allMatch(pi -> pi.leader() != null && !pi.leader().isEmpty());
                if (led && (have == n || (atLeast && have >= n)))
                    return;
                if (!atLeast && have > n)
                    throw new RunError("topic " + quote(topic) + " has " + have + " partitions, expected " + n, null);
            }
            if (System.nanoTime() > deadline)
                throw new RunError("timed out waiting for topic " + quote(topic) + " to have " + n + " partitions", null);
            Thread.sleep(100);
        }
    }

    static void modeDescribe(Args a, PrintStream out) throws Exception {
        String topic = a.need("topic");
        int timeoutMs = a.intOpt("timeout-ms", 60000, 1000);
        try (Admin admin = Admin.create(clientProps(a))) {
            Optional<TopicDescription> d = describe(admin, topic, timeoutMs);
            if (d.isEmpty())
                throw new RunError("topic " + quote(topic) + " does not exist", null);
            out.println(topic + "\t" + d.get().partitions().size());
        }
    }

    static void usage(PrintStream out) {
        out.println("usage: " + PROG + " MODE [options] < corpus");
        out.println();
        out.println("Corpus: one key per line as <type>:<value>, type one of");
        out.println("  string  UTF-8 text            -> StringSerializer");
        out.println("  int32   decimal 32-bit int    -> IntegerSerializer (4 bytes big-endian)");
        out.println("  int64   decimal 64-bit int    -> LongSerializer (8 bytes big-endian)");
        out.println("  uuid    8-4-4-4-12 hex        -> UUIDSerializer (its 36-char lowercase text, UTF-8)");
        out.println("  hex     raw bytes as hex      -> ByteArraySerializer (the bytes as they are)");
        out.println("Empty lines and lines starting with '#' are skipped.");
        out.println();
        out.println("Modes:");
        out.println("  keys [--counts 1,2,6,...] [--format tsv|json]");
        out.println("      per key: line, type, serializer, key_hex, murmur2 (signed), toPositive(murmur2),");
        out.println("      then BuiltInPartitioner.partitionForKey(bytes, n) for each n of --counts");
        out.println("      (default " + java.util.Arrays.toString(DEFAULT_COUNTS) + ").");
        out.println("  produce --bootstrap HOST:PORT --topic T [--format tsv|json] [--acks all] [--timeout-ms 60000]");
        out.println("      sends each key (value = the input line) with a KafkaProducer, default partitioner;");
        out.println("      per key: line, type, key_hex, partition and offset from RecordMetadata, partition count.");
        out.println("  create-topic --bootstrap HOST:PORT --topic T --partitions N [--if-not-exists]");
        out.println("  add-partitions --bootstrap HOST:PORT --topic T --partitions N   (N = new total)");
        out.println("  describe --bootstrap HOST:PORT --topic T      prints: topic <TAB> partition count");
        out.println("  version                                       prints the kafka-clients version");
        out.println("Exit status: 0 ok, 1 Kafka/runtime error, 2 usage or corpus error.");
    }

    public static void main(String[] argv) {
        // kafka-clients logs through SLF4J (slf4j-simple here): warnings only, on stderr.
        System.setProperty("org.slf4j.simpleLogger.defaultLogLevel",
                System.getProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn"));
        System.setProperty("org.slf4j.simpleLogger.logFile", "System.err");
        // Its per-retry "could not be established" warnings drown the final error.
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka.clients.NetworkClient", "error");
        PrintStream out;
        try {
            out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        } catch (UnsupportedEncodingException e) {
            throw new AssertionError(e);
        }
        int rc = 0;
        try {
            if (argv.length == 0)
                throw new UsageError("no mode given (try: " + PROG + " help)");
            switch (argv[0]) {
                case "keys":
                    modeKeys(new Args(argv, "counts", "format", "topic"), System.in, out); break;
                case "produce":
                    modeProduce(new Args(argv, "bootstrap", "topic", "format", "acks", "timeout-ms"), System.in, out); break;
                case "create-topic":
                    modeCreateTopic(new Args(argv, "bootstrap", "topic", "partitions", "if-not-exists", "timeout-ms"), out); break;
                case "add-partitions":
                    modeAddPartitions(new Args(argv, "bootstrap", "topic", "partitions", "timeout-ms"), out); break;
                case "describe":
                    modeDescribe(new Args(argv, "bootstrap", "topic", "timeout-ms"), out); break;
                case "version":
                    out.println(AppInfoParser.getVersion()); break;
                case "help": case "-h": case "--help":
                    usage(out); break;
                default:
                    throw new UsageError("unknown mode " + quote(argv[0]) + " (try: " + PROG + " help)");
            }
        } catch (UsageError e) {
            System.err.println(PROG + ": error: " + e.getMessage());
            rc = 2;
        } catch (RunError e) {
            System.err.println(PROG + ": error: " + e.getMessage()
                    + (e.getCause() != null ? ": " + e.getCause() : ""));
            rc = 1;
        } catch (java.util.concurrent.TimeoutException e) {
            System.err.println(PROG + ": error: timed out talking to Kafka");
            rc = 1;
        } catch (Throwable e) {
            Throwable c = (e instanceof ExecutionException && e.getCause() != null) ? e.getCause() : e;
            System.err.println(PROG + ": error: " + c);
            rc = 1;
        }
        out.flush();
        if (out.checkError() && rc == 0) {
            System.err.println(PROG + ": error: writing to stdout failed");
            rc = 1;
        }
        System.exit(rc);
    }
}
