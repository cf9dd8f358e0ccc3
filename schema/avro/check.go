package avro

import (
	"context"
	"errors"
	"net/http"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/cdcd/cdcd/schema"
)

// Compatibility is the registry's verdict on a schema a record would be written with.
type Compatibility struct {
	Subject    string
	Compatible bool
	Messages   []string // the registry's reasons when not compatible
}

// CheckCompatibility asks the registry whether it would accept s as the next version of the subject a
// record of topic would be written under (POST /compatibility/subjects/{subject}/versions/latest). A
// subject without versions accepts any schema. Nothing is registered.
func (c *Converter) CheckCompatibility(ctx context.Context, topic string, s *schema.Schema) (Compatibility, error) {
	ws, err := c.writerSchema(s)
	if err != nil {
		return Compatibility{}, err
	}
	subject, err := c.subject(topic, ws)
	if err != nil {
		return Compatibility{}, err
	}
	out := Compatibility{Subject: subject, Compatible: true}
	ctx = sr.WithParams(ctx, sr.Verbose)
	err = c.registry.retry(ctx, "checking compatibility with", subject, func(ctx context.Context) error {
		res, err := c.registry.cl.CheckCompatibility(ctx, subject, -1, sr.Schema{Schema: ws.text})
		var resp *sr.ResponseError
		if errors.As(err, &resp) && resp.StatusCode == http.StatusNotFound {
			return nil // no version yet: the first one is always accepted
		}
		if err == nil {
			out.Compatible, out.Messages = res.Is, res.Messages
		}
		return err
	})
	return out, err
}
