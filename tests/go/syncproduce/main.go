// syncproduce: the shape of franz-go's TestClient_Produce as a benchmark. -producers goroutines
// each produce records one at a time with ProduceSync (waiting for each acknowledgement) to one
// partition: key "test", values of 0-999 bytes, MaxBufferedBytes(5000), otherwise the client's
// defaults (acks=all, idempotent, linger 0), as that test does.
// Prints one JSON object: total records, wall seconds, records/s, and the per-record
// acknowledgement latency percentiles in ms.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	bootstrap := flag.String("bootstrap", "127.0.0.1:9092", "brokers")
	topic := flag.String("topic", "", "topic (one partition is used: 0)")
	producers := flag.Int("producers", 50, "concurrent synchronous producers")
	records := flag.Int("records", 20000, "records in total")
	size := flag.Int("size", 1000, "value bytes: each record's is uniform in [0, size) unless -fixed")
	fixed := flag.Bool("fixed", false, "every value is -size bytes")
	maxBuffered := flag.Int("max-buffered-bytes", 5000, "kgo.MaxBufferedBytes (TestClient_Produce: 5000; 0: client default)")
	flag.Parse()
	if *topic == "" {
		fmt.Fprintln(os.Stderr, "syncproduce: -topic is required")
		os.Exit(2)
	}
	opts := []kgo.Opt{kgo.SeedBrokers(strings.Split(*bootstrap, ",")...),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.DefaultProduceTopic(*topic)}
	if *maxBuffered > 0 {
		opts = append(opts, kgo.MaxBufferedBytes(*maxBuffered))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, "syncproduce:", err)
		os.Exit(1)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// One acknowledged record first: connections, metadata and the producer id are ready before the clock starts.
	if err := cl.ProduceSync(ctx, &kgo.Record{Partition: 0, Value: []byte("warm-up")}).FirstErr(); err != nil {
		fmt.Fprintln(os.Stderr, "syncproduce: warm-up:", err)
		os.Exit(1)
	}
	values := make([][]byte, 1024)
	for i := range values {
		n := *size
		if !*fixed {
			n = rand.Intn(*size)
		}
		values[i] = []byte(strings.Repeat("x", n))
	}
	per := *records / *producers
	lat := make([][]float64, *producers)
	errs := make(chan error, *producers)
	var wg sync.WaitGroup
	start := time.Now()
	for p := 0; p < *producers; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			mine := make([]float64, 0, per)
			for i := 0; i < per; i++ {
				t := time.Now()
				rec := &kgo.Record{Partition: 0, Key: []byte("test"), Value: values[(p*per+i)%len(values)]}
				if err := cl.ProduceSync(ctx, rec).FirstErr(); err != nil {
					errs <- err
					return
				}
				mine = append(mine, float64(time.Since(t).Microseconds())/1000)
			}
			lat[p] = mine
		}(p)
	}
	wg.Wait()
	wall := time.Since(start).Seconds()
	close(errs)
	if err := <-errs; err != nil {
		fmt.Fprintln(os.Stderr, "syncproduce:", err)
		os.Exit(1)
	}
	var all []float64
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Float64s(all)
	pct := func(q float64) float64 { return all[int(q*float64(len(all)-1))] }
	out := map[string]any{
		"records": len(all), "seconds": wall, "records_per_s": float64(len(all)) / wall,
		"p50_ms": pct(0.5), "p90_ms": pct(0.9), "p99_ms": pct(0.99), "max_ms": all[len(all)-1],
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
