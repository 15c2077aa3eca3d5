// Apache Kafka 4.3.1's broker configuration, as its own code sees it, for weir's config parity
// tests (tests/scenario/test_config_parity.py).
//
// Modes (one JVM each; every row or file is handled inside it):
//   defs
//     One line per key of KafkaConfig.configDef(), in definition order:
//       name TAB type TAB default TAB validator TAB importance TAB update-mode
//     default is ConfigDef.convertToString of the default, "<none>" for a required key and
//     "<null>" for a null default; validator is the validator's toString() (empty if none);
//     update-mode is read-only, per-broker or cluster-wide (DynamicBrokerConfig).
//   check ROWS_FILE
//     ROWS_FILE holds "key TAB value" lines. For each, KafkaConfig is constructed from a minimal
//     valid single-node KRaft map plus that one entry, and one line is printed:
//       key TAB value TAB ok        or        key TAB value TAB error TAB message
//   props FILE...
//     Loads each file with java.util.Properties.load(InputStream), as Kafka's Utils.loadProps
//     does, and prints "file TAB path", then "entry TAB hex(key) TAB hex(value)" per entry sorted
//     by key (UTF-8 bytes of the Java strings), or "error TAB message" if load threw.
//
// Build: tests/java/build.sh. Run: java -cp "$(cat .cache/kafka/cp.txt):.cache/java" ConfigParity defs

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.common.config.ConfigDef;

public final class ConfigParity {

    static Map<String, String> minimalConfig() {
        Map<String, String> m = new HashMap<>();
        m.put("process.roles", "broker,controller");
        m.put("node.id", "1");
        m.put("controller.quorum.voters", "1@localhost:9093");
        m.put("listeners", "PLAINTEXT://:9092,CONTROLLER://:9093");
        m.put("controller.listener.names", "CONTROLLER");
        m.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
        m.put("log.dirs", "/tmp/weir-config-parity-unused");
        return m;
    }

    static void defs() {
        ConfigDef def = kafka.server.KafkaConfig.configDef();
        Map<String, String> modes = org.apache.kafka.server.config.DynamicBrokerConfig.dynamicConfigUpdateModes();
        for (ConfigDef.ConfigKey k : def.configKeys().values()) {
            String dflt;
            if (k.defaultValue == ConfigDef.NO_DEFAULT_VALUE) {
                dflt = "<none>";
            } else if (k.defaultValue == null) {
                dflt = "<null>";
            } else {
                dflt = ConfigDef.convertToString(k.defaultValue, k.type);
            }
            String validator = k.validator == null ? "" : k.validator.toString();
            System.out.println(String.join("\t", k.name, k.type.toString(), dflt, validator,
                                           k.importance.toString(), modes.getOrDefault(k.name, "read-only")));
        }
    }

    static String oneLine(String s) {
        return s == null ? "" : s.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
    }

    static void check(String rowsFile) throws Exception {
        StringBuilder out = new StringBuilder();
        for (String line : Files.readAllLines(Paths.get(rowsFile), StandardCharsets.UTF_8)) {
            if (line.isEmpty() || line.startsWith("#")) continue;
            int tab = line.indexOf('\t');
            String key = line.substring(0, tab);
            String value = line.substring(tab + 1);
            Map<String, String> m = minimalConfig();
            m.put(key, value);
            String verdict;
            try {
                new kafka.server.KafkaConfig(m, false);
                verdict = "ok";
            } catch (Throwable t) {
                verdict = "error\t" + oneLine(t.getMessage());
            }
            out.append(key).append('\t').append(value).append('\t').append(verdict).append('\n');
        }
        System.out.print(out);
    }

    static String hex(String s) {
        StringBuilder b = new StringBuilder();
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff));
        return b.toString();
    }

    static void props(List<String> files) {
        StringBuilder out = new StringBuilder();
        for (String f : files) {
            out.append("file\t").append(f).append('\n');
            Properties p = new Properties();
            try (InputStream in = Files.newInputStream(Path.of(f))) {
                p.load(in);
                TreeMap<String, String> sorted = new TreeMap<>();
                for (String k : p.stringPropertyNames()) sorted.put(k, p.getProperty(k));
                for (Map.Entry<String, String> e : sorted.entrySet()) {
                    out.append("entry\t").append(hex(e.getKey())).append('\t').append(hex(e.getValue())).append('\n');
                }
            } catch (Throwable t) {
                out.append("error\t").append(oneLine(t.getMessage())).append('\n');
            }
        }
        System.out.print(out);
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("defs")) {
            defs();
        } else if (args.length == 2 && args[0].equals("check")) {
            check(args[1]);
        } else if (args.length >= 1 && args[0].equals("props")) {
            props(new ArrayList<>(List.of(args).subList(1, args.length)));
        } else {
            System.err.println("usage: ConfigParity defs | check ROWS_FILE | props FILE...");
            System.exit(2);
        }
    }
}
