// SPDX-License-Identifier: Apache-2.0

// Command avro-oracle writes keys as a Confluent Schema Registry Avro
// serializer frames them: magic byte 0x00, the schema id as 4 big-endian
// bytes, then the Avro binary encoding of the value (Confluent docs, "Wire
// format"). The Avro encoding comes from github.com/hamba/avro, an
// implementation independent of keyshift's decoder in core/ks_keyenc.c.
//
// Input, one key per line: <schema id> TAB <int|long|string> TAB <value>.
// Output, one line per key: the framed key in hex.
//
//	printf '1\tint\t211234567\n7\tstring\tabc\n' | go run .
//
// tests/unit/data/make-java-fixture.sh uses it to put Schema Registry keys
// into tests/unit/data/java-keys.tsv.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/hamba/avro/v2"
)

func main() {
	schemas := map[string]avro.Schema{
		"int":    avro.MustParse(`"int"`),
		"long":   avro.MustParse(`"long"`),
		"string": avro.MustParse(`"string"`),
	}
	sc := bufio.NewScanner(os.Stdin)
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	for line := 1; sc.Scan(); line++ {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			fmt.Fprintf(os.Stderr, "line %d: want id<TAB>type<TAB>value\n", line)
			os.Exit(2)
		}
		id, err := strconv.ParseUint(f[0], 10, 32)
		schema, ok := schemas[f[1]]
		if err != nil || !ok {
			fmt.Fprintf(os.Stderr, "line %d: bad id or type\n", line)
			os.Exit(2)
		}
		var v any = f[2]
		switch f[1] {
		case "int":
			n, err := strconv.ParseInt(f[2], 10, 32)
			if err != nil {
				fmt.Fprintf(os.Stderr, "line %d: %v\n", line, err)
				os.Exit(2)
			}
			v = int32(n)
		case "long":
			n, err := strconv.ParseInt(f[2], 10, 64)
			if err != nil {
				fmt.Fprintf(os.Stderr, "line %d: %v\n", line, err)
				os.Exit(2)
			}
			v = n
		}
		payload, err := avro.Marshal(schema, v)
		if err != nil {
			fmt.Fprintf(os.Stderr, "line %d: %v\n", line, err)
			os.Exit(1)
		}
		frame := binary.BigEndian.AppendUint32([]byte{0}, uint32(id))
		fmt.Fprintln(w, hex.EncodeToString(append(frame, payload...)))
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
