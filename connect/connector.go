package connect

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/cdcd/cdcd/connect/offsets"
	"github.com/cdcd/cdcd/sink/kafka"
	"github.com/cdcd/cdcd/source"
	"github.com/cdcd/cdcd/source/postgres"
)

// State is a connector's or task's state as Connect's REST API reports it.
type State string

const (
	Unassigned State = "UNASSIGNED"
	Running    State = "RUNNING"
	Paused     State = "PAUSED"
	Stopped    State = "STOPPED"
	Failed     State = "FAILED"
)

// connector runs one connector's single task: it restarts the pipeline from the last durable offset after a
// retriable failure (a Kafka outage, a lost database connection), and stays FAILED after a fatal one.
type connector struct {
	name  string
	props map[string]string
	log   *slog.Logger
	w     *Worker

	mu    sync.Mutex
	state State
	trace string
}

func (c *connector) setState(s State, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.state = s
	c.trace = ""
	if err != nil {
		c.trace = err.Error()
	}
}

// Status returns the connector's state and, when it failed, why.
func (c *connector) Status() (State, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state, c.trace
}

// run runs the task until ctx ends. Each attempt builds a fresh reader from the durable offset, so
// anything delivered but not recorded is delivered again (at-least-once), and nothing is skipped.
func (c *connector) run(ctx context.Context) {
	backoff := time.Second
	for {
		err := c.attempt(ctx)
		if ctx.Err() != nil {
			c.setState(Stopped, nil)
			return
		}
		var cfgErr *postgres.ConfigError
		if errors.As(err, &cfgErr) || isFatal(err) {
			c.log.Error("connector failed; fix the cause and restart it", "connector", c.name, "error", err)
			c.setState(Failed, err)
			return
		}
		c.log.Warn("connector task failed; restarting from the last recorded offset", "connector", c.name, "in", backoff, "error", err)
		c.setState(Running, err)
		select {
		case <-ctx.Done():
			c.setState(Stopped, nil)
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, time.Minute)
	}
}

// isFatal reports errors a restart cannot fix.
func isFatal(err error) bool {
	var fatal interface{ Fatal() bool }
	return errors.As(err, &fatal) && fatal.Fatal()
}

func (c *connector) attempt(ctx context.Context) error {
	cfg, err := postgres.ParseConfig(c.name, c.props, c.log)
	if err != nil {
		return err
	}
	key, err := offsets.Key(c.name, map[string]any{"server": cfg.TopicPrefix})
	if err != nil {
		return err
	}
	var start *postgres.Offset
	if raw, ok := c.w.offsets.Get(key); ok {
		m, err := offsets.DecodeValue(raw)
		if err != nil {
			return fmt.Errorf("stored offset of connector %q: %w", c.name, err)
		}
		o, err := postgres.ParseOffset(m.Map())
		if err != nil {
			return fmt.Errorf("stored offset of connector %q: %w", c.name, err)
		}
		start = &o
	}
	producerCfg, err := c.w.producerConfig(c.name, c.props)
	if err != nil {
		return err
	}
	sender, err := kafka.NewWriter(producerCfg, c.log)
	if err != nil {
		return err
	}
	defer sender.Close(context.Background())

	c.setState(Running, nil)
	p := &Pipeline{
		Reader:        postgres.NewReader(cfg, start, c.log),
		Encoder:       c.w.encoder,
		Sender:        sender,
		Offsets:       fileOffsetWriter{store: c.w.offsets, key: key},
		FlushInterval: c.w.flushInterval,
		Log:           c.log,
	}
	return p.Run(ctx)
}

// fileOffsetWriter stores one connector partition's offset in the standalone offsets file.
type fileOffsetWriter struct {
	store *offsets.FileStore
	key   []byte
}

func (f fileOffsetWriter) WriteOffset(offset []source.OffsetField) error {
	fields := make(offsets.Fields, len(offset))
	for i, o := range offset {
		fields[i] = offsets.Field{Name: o.Name, Value: o.Value}
	}
	value, err := offsets.EncodeValue(fields)
	if err != nil {
		return err
	}
	return f.store.Put([]offsets.Entry{{Key: f.key, Value: value}})
}
