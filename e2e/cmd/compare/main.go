// Command compare diffs two JSONL captures (or, with -offsets, two offsets JSON files printed by
// e2e/debezium/OffsetsDump.java), blanking only the fields the mode allows to differ.
//
//	compare [-mode same-db|replay] [-offsets] A B
//
// Every difference is printed as one line, e.g. `pg1.public.t#3 value.payload.after.x: "1" != "2"`.
// Exit status: 0 when equal, 1 on differences, 2 on usage or read errors.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/cdcd/cdcd/e2e/capture"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	flags := flag.NewFlagSet("compare", flag.ContinueOnError)
	flags.SetOutput(stderr)
	modeName := flags.String("mode", "replay", "same-db (two captures of one database) or replay (a fresh database replaying the same SQL)")
	offsets := flags.Bool("offsets", false, "the inputs are offsets JSON files, not captures")
	if err := flags.Parse(args); err != nil {
		return 2
	}
	if flags.NArg() != 2 {
		fmt.Fprintln(stderr, "usage: compare [-mode same-db|replay] [-offsets] A B")
		return 2
	}
	mode, err := capture.ParseMode(*modeName)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	read := capture.ReadJSONL
	if *offsets {
		read = capture.ReadOffsetsJSON
	}
	var sides [2][]capture.Record
	for i, path := range flags.Args() {
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		sides[i], err = read(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", path, err)
			return 2
		}
	}
	diffs := capture.Compare(sides[0], sides[1], mode)
	for _, d := range diffs {
		fmt.Fprintln(stdout, d)
	}
	if len(diffs) > 0 {
		fmt.Fprintf(stdout, "%d differences (A=%s, B=%s)\n", len(diffs), flags.Arg(0), flags.Arg(1))
		return 1
	}
	return 0
}
