package transforms

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/cdcd/cdcd/source"
)

// FuzzChainConfig builds a chain from a connector config (one key=value per line) and, when the config is
// accepted, runs it over a change, a tombstone and a heartbeat. A config is outside input (REST, a
// properties file): refusing it is fine, panicking in New or in Transform is not.
func FuzzChainConfig(f *testing.F) {
	for _, class := range slices.Sorted(maps.Keys(transformTypes)) {
		f.Add("transforms=t\ntransforms.t.type=" + class)
	}
	for _, class := range slices.Sorted(maps.Keys(predicateTypes)) {
		f.Add("transforms=t\ntransforms.t.type=" + filterClass + "\ntransforms.t.predicate=p\npredicates=p\npredicates.p.type=" + class +
			"\npredicates.p.pattern=srv\\..*\npredicates.p.name=h")
	}
	for _, seed := range []string{
		"predicates=p\npredicates.p.type=" + topicMatches + "\npredicates.p.pattern=a)|(b", // issue 17: panicked in MustCompile
		"transforms=r\ntransforms.r.type=" + routerClass + "\ntransforms.r.regex=a)|(b\ntransforms.r.replacement=x",
		"transforms=r\ntransforms.r.type=" + routerClass + "\ntransforms.r.regex=(.*)\\.(.*)\ntransforms.r.replacement=$2_$1",
		"transforms=u,r\ntransforms.u.type=io.debezium.transforms.ExtractNewRecordState\ntransforms.u.add.fields=op,table\ntransforms.u.delete.tombstone.handling.mode=rewrite" +
			"\ntransforms.r.type=io.debezium.transforms.ByLogicalTableRouter\ntransforms.r.topic.regex=(.*)customers\ntransforms.r.topic.replacement=$1all" +
			"\ntransforms.r.key.field.regex=(.*)\ntransforms.r.key.field.replacement=$1",
		"transforms=c\ntransforms.c.type=org.apache.kafka.connect.transforms.Cast$Value\ntransforms.c.spec=id:string,name:int8",
		"transforms=f,m\ntransforms.f.type=org.apache.kafka.connect.transforms.Flatten$Value\ntransforms.f.delimiter=_" +
			"\ntransforms.m.type=org.apache.kafka.connect.transforms.MaskField$Value\ntransforms.m.fields=after_name\ntransforms.m.replacement=x",
		"transforms=h\ntransforms.h.type=org.apache.kafka.connect.transforms.InsertHeader\ntransforms.h.header=h\ntransforms.h.value.literal=[1,2]",
		"transforms=ts\ntransforms.ts.type=org.apache.kafka.connect.transforms.TimestampConverter$Value\ntransforms.ts.field=ts_ms" +
			"\ntransforms.ts.target.type=string\ntransforms.ts.format=yyyy-MM-dd'T'HH:mm:ss.SSSXXX",
		"transforms=tr\ntransforms.tr.type=org.apache.kafka.connect.transforms.TimestampRouter\ntransforms.tr.topic.format=${topic}-${timestamp}" +
			"\ntransforms.tr.timestamp.format=yyyyMMdd",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		props := map[string]string{}
		for line := range strings.SplitSeq(text, "\n") {
			k, v, _ := strings.Cut(line, "=")
			props[k] = v
		}
		chain, err := New(props, slog.New(slog.DiscardHandler))
		if err != nil {
			return
		}
		for _, ev := range []source.Event{change("u", row(1, "a", "old"), row(1, "b", nil)), change("d", row(2, nil, nil), nil), tombstone(), heartbeat()} {
			_, _ = chain.Transform(&ev)
		}
	})
}
