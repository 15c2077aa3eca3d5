// Command kmsgvectors writes golden protocol vectors made by franz-go's kmsg package, an encoder
// written independently of both Apache Kafka and weir.
//
// For every API key weir serves and every version that both Kafka 4.3.1 and kmsg define, it fills
// kmsg request and response structs with random values through reflection, sets the version and
// serialises the message body with AppendTo.
//
// Output, one sample a line (lines starting with '#' are comments):
//
//	req|resp <api_key> <version> <lowercase hex of the message body>
//
// Usage:
//
//	kmsgvectors --seed N --samples K --out FILE [--keys 0,1,18]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math"
	"math/rand"
	"os"
	"reflect"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// api lists a key weir serves with the version range Kafka 4.3.1 defines for it (the "versions="
// of protocol/schema/api/<Name>Request.wsc, which match kafka-clients 4.3.1's ApiMessageType). Min
// is the lowest version vectors are emitted for.
type api struct {
	key      int16
	name     string
	min, max int16
}

var apis = []api{
	{0, "Produce", 3, 13},
	{1, "Fetch", 4, 18},
	{2, "ListOffsets", 1, 11},
	{3, "Metadata", 0, 13},
	{8, "OffsetCommit", 2, 10},
	{9, "OffsetFetch", 1, 10},
	{10, "FindCoordinator", 0, 6},
	{11, "JoinGroup", 0, 9},
	{12, "Heartbeat", 0, 4},
	{13, "LeaveGroup", 0, 5},
	{14, "SyncGroup", 0, 5},
	{15, "DescribeGroups", 0, 6},
	{16, "ListGroups", 0, 5},
	{17, "SaslHandshake", 0, 1},
	{18, "ApiVersions", 0, 4},
	{19, "CreateTopics", 2, 7},
	{20, "DeleteTopics", 1, 6},
	{21, "DeleteRecords", 0, 2},
	{22, "InitProducerId", 0, 6},
	{23, "OffsetForLeaderEpoch", 2, 4},
	{24, "AddPartitionsToTxn", 0, 5},
	{25, "AddOffsetsToTxn", 0, 4},
	{26, "EndTxn", 0, 5},
	{27, "WriteTxnMarkers", 1, 2},
	{28, "TxnOffsetCommit", 0, 5},
	{29, "DescribeAcls", 1, 3},
	{30, "CreateAcls", 1, 3},
	{31, "DeleteAcls", 1, 3},
	{32, "DescribeConfigs", 1, 4},
	{33, "AlterConfigs", 0, 2},
	{35, "DescribeLogDirs", 1, 5},
	{36, "SaslAuthenticate", 0, 2},
	{37, "CreatePartitions", 0, 3},
	{42, "DeleteGroups", 0, 2},
	{43, "ElectLeaders", 0, 2},
	{44, "IncrementalAlterConfigs", 0, 1},
	{46, "ListPartitionReassignments", 0, 0},
	{47, "OffsetDelete", 0, 0},
	{48, "DescribeClientQuotas", 0, 1},
	{49, "AlterClientQuotas", 0, 1},
	{50, "DescribeUserScramCredentials", 0, 0},
	{51, "AlterUserScramCredentials", 0, 0},
	{60, "DescribeCluster", 0, 2},
	{61, "DescribeProducers", 0, 0},
	{65, "DescribeTransactions", 0, 0},
	{66, "ListTransactions", 0, 2},
	{68, "ConsumerGroupHeartbeat", 0, 1},
	{69, "ConsumerGroupDescribe", 0, 1},
	{75, "DescribeTopicPartitions", 0, 0},
}

// kmsg writes a tagged field whenever it differs from its default, whatever the version; it is
// up to the caller to leave fields alone in versions that do not have them. These are the tagged
// fields (Go struct type.field) of the keys above that first appear after their message's first
// flexible version, with that first version (Kafka 4.3.1 schemas). Below it they keep the default.
var taggedSince = map[string]int16{
	"ProduceResponse.Brokers":                       10, // NodeEndpoints
	"ProduceResponseTopicPartition.CurrentLeader":   10,
	"FetchRequest.ReplicaState":                     15,
	"FetchRequestTopicPartition.ReplicaDirectoryID": 17,
	"FetchRequestTopicPartition.HighWatermark":      18,
	"FetchResponse.Brokers":                         16, // NodeEndpoints
}

// Code points mixed into strings: 2-, 3- and 4-byte UTF-8 sequences.
var nonASCII = []rune{0xe9, 0xdf, 0x3a9, 0x416, 0x5d0, 0x4e2d, 0x6587, 0x20ac, 0xfeff, 0x1f600, 0x1f680, 0x10348}

type stats struct {
	nilPtrs, nilSlices, emptySlices, nonEmptySlices, defaulted int
}

func (s *stats) add(o stats) {
	s.nilPtrs += o.nilPtrs
	s.nilSlices += o.nilSlices
	s.emptySlices += o.emptySlices
	s.nonEmptySlices += o.nonEmptySlices
	s.defaulted += o.defaulted
}

type filler struct {
	r       *rand.Rand
	version int16
	stats
}

var tagsType = reflect.TypeOf(kmsg.Tags{})

// signed returns a value of the given bit width: uniform over the full range most of the time,
// otherwise an edge value.
func (f *filler) signed(bits int) int64 {
	min, max := int64(-1)<<(bits-1), int64(1)<<(bits-1)-1
	if f.r.Intn(6) == 0 {
		edges := []int64{0, 1, -1, min, max, min + 1, max - 1}
		return edges[f.r.Intn(len(edges))]
	}
	v := int64(f.r.Uint64())
	if bits < 64 {
		v = v >> (64 - bits) // arithmetic shift keeps the sign: full range of the width
	}
	return v
}

func (f *filler) unsigned(bits int) uint64 {
	max := uint64(math.MaxUint64) >> (64 - bits)
	if f.r.Intn(6) == 0 {
		edges := []uint64{0, 1, max, max - 1}
		return edges[f.r.Intn(len(edges))]
	}
	return f.r.Uint64() >> (64 - bits)
}

func (f *filler) float64() float64 {
	if f.r.Intn(6) == 0 {
		edges := []float64{0, math.Copysign(0, -1), 1, -1.5, math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}
		return edges[f.r.Intn(len(edges))]
	}
	for {
		d := math.Float64frombits(f.r.Uint64())
		if !math.IsNaN(d) {
			return d
		}
	}
}

func (f *filler) string() string {
	n := f.r.Intn(13)
	var b strings.Builder
	for i := 0; i < n; i++ {
		if f.r.Intn(4) == 0 {
			b.WriteRune(nonASCII[f.r.Intn(len(nonASCII))])
		} else {
			b.WriteByte(byte(0x20 + f.r.Intn(0x5f)))
		}
	}
	return b.String()
}

// callDefault applies kmsg's Default() to a struct so that fields the filler leaves alone keep
// kmsg's (and Kafka's) default, which is what makes tagged fields absent.
func callDefault(v reflect.Value) {
	if !v.CanAddr() {
		return
	}
	if m := v.Addr().MethodByName("Default"); m.IsValid() && m.Type().NumIn() == 0 {
		m.Call(nil)
	}
}

// fill sets v (addressable) to a random value of its type.
func (f *filler) fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(f.r.Intn(2) == 0)
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(f.signed(v.Type().Bits()))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(f.unsigned(v.Type().Bits()))
	case reflect.Float64:
		v.SetFloat(f.float64())
	case reflect.String:
		v.SetString(f.string())
	case reflect.Array: // [16]byte UUIDs
		if v.Type().Elem().Kind() == reflect.Uint8 {
			switch f.r.Intn(8) {
			case 0: // the zero UUID
				for i := 0; i < v.Len(); i++ {
					v.Index(i).SetUint(0)
				}
			default:
				for i := 0; i < v.Len(); i++ {
					v.Index(i).SetUint(uint64(f.r.Intn(256)))
				}
			}
			return
		}
		for i := 0; i < v.Len(); i++ {
			f.fill(v.Index(i))
		}
	case reflect.Slice:
		if f.r.Intn(5) == 0 { // nil: null where the version allows it, else empty
			v.Set(reflect.Zero(v.Type()))
			f.nilSlices++
			return
		}
		n := f.r.Intn(4)
		if v.Type().Elem().Kind() == reflect.Uint8 { // bytes / records
			n = f.r.Intn(13)
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := 0; i < n; i++ {
			e := s.Index(i)
			if e.Kind() == reflect.Struct {
				callDefault(e)
			}
			f.fill(e)
		}
		if n == 0 {
			f.emptySlices++
		} else {
			f.nonEmptySlices++
		}
		v.Set(s)
	case reflect.Ptr: // nullable string or nullable struct
		if f.r.Intn(5) == 0 {
			v.Set(reflect.Zero(v.Type()))
			f.nilPtrs++
			return
		}
		p := reflect.New(v.Type().Elem())
		if p.Elem().Kind() == reflect.Struct {
			callDefault(p.Elem())
		}
		f.fill(p.Elem())
		v.Set(p)
	case reflect.Struct:
		f.fillStruct(v, false)
	default:
		panic(fmt.Sprintf("no generator for %s", v.Type()))
	}
}

// fillStruct fills every exported field except UnknownTags (and Version on a top-level message);
// one field in six keeps its default.
func (f *filler) fillStruct(v reflect.Value, top bool) {
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		if !sf.IsExported() || sf.Type == tagsType || (top && sf.Name == "Version") {
			continue
		}
		if since, ok := taggedSince[t.Name()+"."+sf.Name]; ok && f.version < since {
			continue
		}
		if f.r.Intn(6) == 0 {
			f.defaulted++
			continue
		}
		f.fill(v.Field(i))
	}
}

// message is what kmsg requests and responses have in common.
type message interface {
	SetVersion(int16)
	MaxVersion() int16
	AppendTo([]byte) []byte
}

func mix(seed int64, what string, version int16, sample int) int64 {
	h := uint64(seed) * 0x9E3779B97F4A7C15
	for i := 0; i < len(what); i++ {
		h = (h ^ uint64(what[i])) * 0x100000001B3
	}
	h = (h ^ uint64(uint16(version))) * 0xBF58476D1CE4E5B9
	h = (h ^ uint64(sample)) * 0x94D049BB133111EB
	return int64(h ^ h>>31)
}

// encode builds one random sample; a panic inside kmsg becomes an error.
func encode(newMsg func() message, version int16, r *rand.Rand) (out []byte, st stats, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", strings.ReplaceAll(fmt.Sprint(p), "\n", " "))
		}
	}()
	m := newMsg()
	v := reflect.ValueOf(m).Elem()
	callDefault(v)
	f := &filler{r: r, version: version}
	f.fillStruct(v, true)
	m.SetVersion(version)
	return m.AppendTo(nil), f.stats, nil
}

func main() {
	seed := flag.Int64("seed", 1, "random seed")
	samples := flag.Int("samples", 4, "samples per (kind, key, version)")
	out := flag.String("out", "", "output file")
	keys := flag.String("keys", "", "comma-separated API keys to emit (default: all)")
	flag.Parse()
	if *out == "" || *samples < 1 {
		fmt.Fprintln(os.Stderr, "usage: kmsgvectors --seed N --samples K --out FILE [--keys 0,1,18]")
		os.Exit(2)
	}
	var keep map[int16]bool
	if *keys != "" {
		keep = map[int16]bool{}
		for _, k := range strings.Split(*keys, ",") {
			n, err := strconv.ParseInt(strings.TrimSpace(k), 10, 16)
			if err != nil {
				fmt.Fprintf(os.Stderr, "bad --keys entry %q\n", k)
				os.Exit(2)
			}
			keep[int16(n)] = true
		}
	}

	var lines []string
	var total stats
	combos, counts := 0, map[string]int{}
	var skipped []string
	skip := func(s string) {
		lines = append(lines, "# "+s)
		skipped = append(skipped, s)
	}
	for _, a := range apis {
		if keep != nil && !keep[a.key] {
			continue
		}
		for _, kind := range []string{"req", "resp"} {
			newMsg := func() message {
				if kind == "req" {
					return kmsg.RequestForKey(a.key).(message)
				}
				return kmsg.ResponseForKey(a.key).(message)
			}
			if kmsg.RequestForKey(a.key) == nil {
				skip(fmt.Sprintf("%s %d (%s) skipped: kmsg has no type for this key", kind, a.key, a.name))
				continue
			}
			kmax := newMsg().MaxVersion()
			for v := a.min; v <= a.max; v++ {
				if v > kmax {
					skip(fmt.Sprintf("%s %d %d (%s) skipped: kmsg %s supports only up to v%d", kind, a.key, v, a.name, kmsgVersion(), kmax))
					continue
				}
				combos++
				for i := 0; i < *samples; i++ {
					r := rand.New(rand.NewSource(mix(*seed, kind+strconv.Itoa(int(a.key)), v, i)))
					b, st, err := encode(newMsg, v, r)
					if err != nil {
						skip(fmt.Sprintf("%s %d %d (%s) sample %d skipped: %v", kind, a.key, v, a.name, i, err))
						continue
					}
					total.add(st)
					counts[kind]++
					lines = append(lines, fmt.Sprintf("%s %d %d %x", kind, a.key, v, b))
				}
			}
		}
	}

	fh, err := os.Create(*out)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	w := bufio.NewWriter(fh)
	fmt.Fprintf(w, "# weir golden protocol vectors from franz-go kmsg %s (reflection-filled structs, AppendTo)\n", kmsgVersion())
	fmt.Fprintf(w, "# seed=%d samples=%d\n", *seed, *samples)
	fmt.Fprintln(w, "# format: req|resp <api_key> <version> <hex body>")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
	if err := w.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := fh.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}

	fmt.Fprintf(os.Stderr, "kmsg: %d (kind,key,version) combinations; lines: req=%d resp=%d; skipped=%d\n",
		combos, counts["req"], counts["resp"], len(skipped))
	fmt.Fprintf(os.Stderr, "kmsg: fill: nil pointers=%d, nil slices=%d, empty slices=%d, non-empty slices=%d, fields left default=%d\n",
		total.nilPtrs, total.nilSlices, total.emptySlices, total.nonEmptySlices, total.defaulted)
	sort.Strings(skipped)
	for _, s := range skipped {
		fmt.Fprintln(os.Stderr, "kmsg: "+s)
	}
}

// kmsgVersion reports the kmsg module version compiled in.
func kmsgVersion() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/twmb/franz-go/pkg/kmsg" {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}
