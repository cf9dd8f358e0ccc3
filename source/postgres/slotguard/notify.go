package slotguard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// Event kinds, as the webhook receives them in "event".
const (
	EventAlertStarted   = "alert_started"
	EventAlertCleared   = "alert_cleared"
	EventSlotDropped    = "slot_dropped"
	EventSlotDropDryRun = "slot_drop_dry_run"
)

// Event is one webhook body: an alert that started or cleared, or a slot that was (or in a dry run would
// have been) dropped.
type Event struct {
	Event  string     `json:"event"`
	At     time.Time  `json:"at"`
	Alert  *Alert     `json:"alert,omitempty"`
	Slot   SlotReport `json:"slot"`
	Reason string     `json:"reason,omitempty"`
}

// announce logs alert changes (once when an alert starts, once when it clears; never on every refresh) and
// hands every event to the webhook. A cleared alert is logged at warn so that a log filtered at warn shows
// the end of every alert it showed the start of.
func (g *Guardian) announce(events []Event) {
	for _, e := range events {
		if e.Alert != nil {
			attrs := []any{"server", e.Slot.Server, "slot", e.Slot.Name, "status", e.Slot.Status, "kind", e.Alert.Kind, "alert", e.Alert.Message}
			switch {
			case e.Event == EventAlertCleared:
				g.log.Warn("replication slot alert cleared", append(attrs, "since", e.Alert.Since, "reason", e.Reason)...)
			case e.Alert.Severity == SeverityError:
				g.log.Error("replication slot alert", attrs...)
			default:
				g.log.Warn("replication slot alert", attrs...)
			}
		}
		g.notify(e)
	}
}

func (g *Guardian) notify(e Event) {
	if g.webhook != nil {
		g.webhook.enqueue(e)
	}
}

// webhookQueue bounds the events waiting for delivery; beyond it new events are dropped (and logged), so a
// dead receiver costs bounded memory and never slows the refreshes.
const webhookQueue = 256

// webhook delivers events one at a time, in order, each retried with exponential backoff a bounded number
// of times.
type webhook struct {
	url      string
	client   *http.Client
	log      *slog.Logger
	queue    chan Event
	attempts int
	backoff  time.Duration // before the second try; doubled for each further try, up to maxBackoff
	failures atomic.Int64  // events given up on, for the metrics
}

const maxWebhookBackoff = 30 * time.Second

func newWebhook(url string, log *slog.Logger) *webhook {
	return &webhook{url: url, client: &http.Client{Timeout: 10 * time.Second}, log: log, queue: make(chan Event, webhookQueue), attempts: 6, backoff: time.Second}
}

// enqueue never blocks.
func (w *webhook) enqueue(e Event) {
	select {
	case w.queue <- e:
	default:
		w.log.Warn("webhook queue full; event not sent", "event", e.Event, "server", e.Slot.Server, "slot", e.Slot.Name)
	}
}

// run delivers queued events until ctx ends.
func (w *webhook) run(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case e := <-w.queue:
			if err := w.deliver(ctx, e); err != nil && ctx.Err() == nil {
				w.failures.Add(1)
				w.log.Error("webhook call failed; event dropped", "event", e.Event, "server", e.Slot.Server, "slot", e.Slot.Name, "error", err)
			}
		}
	}
}

// deliver POSTs e until the receiver answers 2xx, it answers a client error other than 429 (retrying cannot
// help), the tries run out, or ctx ends.
func (w *webhook) deliver(ctx context.Context, e Event) error {
	body, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encoding the event: %w", err)
	}
	wait := w.backoff
	for attempt := 1; ; attempt++ {
		retry, err := w.post(ctx, body)
		if err == nil {
			return nil
		}
		if !retry || attempt >= w.attempts {
			return fmt.Errorf("after %d tries: %w", attempt, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		wait = min(wait*2, maxWebhookBackoff)
	}
}

func (w *webhook) post(ctx context.Context, body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := w.client.Do(req)
	if err != nil {
		return true, err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500:
		return true, fmt.Errorf("receiver answered %s", resp.Status)
	}
	return false, fmt.Errorf("receiver answered %s", resp.Status)
}
