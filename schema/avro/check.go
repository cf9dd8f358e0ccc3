package avro

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

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
	err = c.registry.retry(ctx, "checking compatibility with", subject, func(cn conn) error {
		v, err := cn.compatibility(subject, ws.text)
		var resp *responseError
		if errors.As(err, &resp) && resp.status == http.StatusNotFound {
			return nil // no version yet: the first one is always accepted
		}
		if err == nil {
			out.Compatible, out.Messages = v.IsCompatible, v.Messages
		}
		return err
	})
	return out, err
}

// verdict is the registry's answer to a compatibility check.
type verdict struct {
	IsCompatible bool     `json:"is_compatible"`
	Messages     []string `json:"messages"`
}

// compatibility is POST /compatibility/subjects/{subject}/versions/latest?verbose=true. srclient has this
// endpoint only without verbose, and reads the verdict but not the registry's reasons.
func (c conn) compatibility(subject, text string) (verdict, error) {
	body, err := json.Marshal(map[string]string{"schema": text})
	if err != nil {
		return verdict{}, err
	}
	// Without a context, like srclient's requests: the transport binds the request's.
	req, err := http.NewRequest(http.MethodPost,
		c.base+"/compatibility/subjects/"+url.PathEscape(subject)+"/versions/latest?verbose=true", bytes.NewReader(body))
	if err != nil {
		return verdict{}, err
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.hc.Do(req)
	if err != nil {
		return verdict{}, err
	}
	defer resp.Body.Close()
	if c.tr.refusal != nil {
		return verdict{}, c.tr.refusal
	}
	var v verdict
	err = json.NewDecoder(resp.Body).Decode(&v)
	return v, err
}
