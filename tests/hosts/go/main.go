// SPDX-License-Identifier: Apache-2.0

// A confluent-kafka-go producer with keyshift loaded by full path, on
// librdkafka's mock cluster (tests/hosts/test_go.sh builds it twice: with
// the module's bundled static librdkafka, the default, and with
// -tags dynamic against the system's shared one).
//
//	go-host PLUGIN REPORT
//
// Prints "librdkafka <version>", "mapped <n> <file>" (the librdkafka files
// in /proc/self/maps while the producer runs) and "delivered <n>" on
// success; "ERROR: <err>" and exit status 3 when the producer cannot be
// configured (the plugin refused to load).
package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

const messages = 3000

func mappedLibrdkafkas() []string {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return nil
	}
	defer f.Close()
	seen := map[string]bool{}
	var files []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 6 {
			continue
		}
		base := filepath.Base(fields[5])
		if strings.Contains(base, "librdkafka") && !seen[fields[5]] {
			seen[fields[5]] = true
			files = append(files, fields[5])
		}
	}
	return files
}

func main() {
	p, err := kafka.NewProducer(&kafka.ConfigMap{
		"plugin.library.paths":         os.Args[1],
		"test.mock.num.brokers":        1,
		"keyshift.report.path":         os.Args[2],
		"keyshift.partitions.proposed": "6,12",
		"keyshift.overload":            "analyse",
	})
	if err != nil {
		fmt.Println("ERROR:", err)
		os.Exit(3)
	}
	_, ver := kafka.LibraryVersion()
	fmt.Println("librdkafka", ver)
	done := make(chan int)
	go func() {
		n := 0
		for e := range p.Events() {
			if m, ok := e.(*kafka.Message); ok {
				if m.TopicPartition.Error != nil {
					fmt.Println("delivery failed:", m.TopicPartition.Error)
					os.Exit(1)
				}
				n++
				if n == messages {
					done <- n
				}
			}
		}
	}()
	topic := "mmsi"
	for i := 0; i < messages; i++ {
		key := []byte(fmt.Sprint(219000000 + i%541))
		for p.Produce(&kafka.Message{
			TopicPartition: kafka.TopicPartition{Topic: &topic, Partition: kafka.PartitionAny},
			Key:            key, Value: []byte(fmt.Sprint("pos-", i)),
		}, nil) != nil {
			p.Flush(10)
		}
	}
	n := <-done
	maps := mappedLibrdkafkas()
	fmt.Println("mapped", len(maps), strings.Join(maps, " "))
	fmt.Println("delivered", n)
	p.Close()
}
