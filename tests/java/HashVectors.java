// Golden metadata hashes (KIP-1101) from Apache Kafka 4.3.1's own code (group-coordinator jar:
// org.apache.kafka.coordinator.group.Utils.computeTopicHash and
// org.apache.kafka.coordinator.group.modern.ModernGroup.computeMetadataHash, which filters the
// subscribed names by the image and combines their topic hashes with Utils.computeGroupHash).
//
// The metadata is a real KRaft image: the table's brokers, topics and partitions are replayed as
// RegisterBrokerRecord / TopicRecord / PartitionRecord into a MetadataDelta, and the image is
// read through KRaftCoordinatorMetadataImage, whose partitionRacks gives the racks of a
// partition's replicas as the group coordinator sees them.
//
// Usage: java -cp "$(cat .cache/kafka/cp.txt):.cache/java" HashVectors CASES OUT
//          the table (tests/data/metadata_hash_cases.txt; its header describes it) -> OUT
//        java -cp ... HashVectors group NAME:ID:PARTITIONS...
//          the metadata hash of a group subscribed to these topics (no racks; ID in Kafka's
//          base64 form), on stdout

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.coordinator.common.runtime.CoordinatorMetadataImage;
import org.apache.kafka.coordinator.common.runtime.KRaftCoordinatorMetadataImage;
import org.apache.kafka.coordinator.group.Utils;
import org.apache.kafka.coordinator.group.modern.ModernGroup;
import org.apache.kafka.coordinator.group.modern.SubscriptionCount;
import org.apache.kafka.image.MetadataDelta;
import org.apache.kafka.image.MetadataImage;
import org.apache.kafka.image.MetadataProvenance;

public final class HashVectors {
  // "MSB:LSB" in hex, or Kafka's base64 form.
  static Uuid uuid(String text) {
    int colon = text.indexOf(':');
    if (colon < 0) return Uuid.fromString(text);
    return new Uuid(Long.parseUnsignedLong(text.substring(0, colon), 16),
                    Long.parseUnsignedLong(text.substring(colon + 1), 16));
  }

  static List<Integer> ints(String csv) {
    List<Integer> out = new ArrayList<>();
    if (csv.isEmpty()) return out;
    for (String s : csv.split(",")) out.add(Integer.parseInt(s));
    return out;
  }

  // Replays a topic: partitions with the given replicas (per partition, '/'-separated; none: an
  // unregistered broker 1000, so no rack).
  static void replayTopic(MetadataDelta delta, String name, Uuid id, int partitions, String replicas) {
    delta.replay(new TopicRecord().setName(name).setTopicId(id));
    String[] perPartition = replicas == null ? new String[0] : replicas.split("/", -1);
    for (int p = 0; p < partitions; p++) {
      List<Integer> rs = p < perPartition.length ? ints(perPartition[p]) : List.of(1000);
      if (rs.isEmpty()) rs = List.of(1000);
      delta.replay(new PartitionRecord().setTopicId(id).setPartitionId(p).setReplicas(rs).setIsr(rs)
                       .setLeader(rs.get(0)).setLeaderEpoch(0).setPartitionEpoch(0));
    }
  }

  static MetadataImage image(MetadataDelta delta) {
    return delta.apply(MetadataProvenance.EMPTY);
  }

  public static void main(String[] args) throws IOException {
    if (args.length >= 1 && args[0].equals("group")) {
      MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
      Map<String, SubscriptionCount> subscribed = new HashMap<>();
      for (int i = 1; i < args.length; i++) {
        String[] t = args[i].split(":");
        replayTopic(delta, t[0], uuid(t[1]), Integer.parseInt(t[2]), null);
        subscribed.put(t[0], new SubscriptionCount(1, 0));
      }
      CoordinatorMetadataImage img = new KRaftCoordinatorMetadataImage(image(delta));
      System.out.println(ModernGroup.computeMetadataHash(subscribed, new HashMap<>(), img));
      return;
    }
    if (args.length != 2) {
      System.err.println("usage: HashVectors CASES OUT | HashVectors group NAME:ID:PARTITIONS...");
      System.exit(2);
    }
    List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder();
    out.append("# Made by tests/java/HashVectors.java from metadata_hash_cases.txt with Kafka 4.3.1's\n");
    out.append("# Utils.computeTopicHash and ModernGroup.computeMetadataHash. Do not edit.\n");
    MetadataDelta delta = new MetadataDelta.Builder().setImage(MetadataImage.EMPTY).build();
    List<String> topics = new ArrayList<>();
    CoordinatorMetadataImage img = null;
    for (String raw : lines) {
      String line = raw.strip();
      if (line.isEmpty() || line.startsWith("#")) continue;
      String[] w = line.split("\\s+");
      switch (w[0]) {
        case "broker": {
          RegisterBrokerRecord r = new RegisterBrokerRecord().setBrokerId(Integer.parseInt(w[1]))
              .setIncarnationId(Uuid.randomUuid()).setBrokerEpoch(1).setFenced(false);
          // Without broker.rack a broker registers a null rack (the record's default is "").
          r.setRack(w.length > 2 ? w[2] : null);
          delta.replay(r);
          break;
        }
        case "topic": {
          replayTopic(delta, w[1], uuid(w[2]), Integer.parseInt(w[3]), w.length > 4 ? w[4] : null);
          topics.add(w[1]);
          break;
        }
        case "group": {
          if (img == null) {
            img = new KRaftCoordinatorMetadataImage(image(delta));
            for (String t : topics) out.append("topic ").append(t).append(' ')
                .append(Utils.computeTopicHash(t, img)).append('\n');
          }
          Map<String, SubscriptionCount> subscribed = new HashMap<>();
          if (!w[1].equals("-")) {
            for (String t : w[1].split(",")) subscribed.put(t, new SubscriptionCount(1, 0));
          }
          long hash = ModernGroup.computeMetadataHash(subscribed, new HashMap<>(), img);
          out.append("group ").append(w[1]).append(' ').append(hash).append('\n');
          break;
        }
        default:
          throw new IllegalArgumentException("unknown line: " + line);
      }
    }
    Files.write(Paths.get(args[1]), out.toString().getBytes(StandardCharsets.UTF_8));
  }
}
