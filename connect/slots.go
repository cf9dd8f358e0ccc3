package connect

import (
	"context"
	"log/slog"
	"strings"

	"github.com/cdcd/cdcd/source/postgres"
	"github.com/cdcd/cdcd/source/postgres/slotguard"
)

// Guardian returns the worker's replication-slot guardian; its Run, handlers and metrics are the caller's
// to start and mount.
func (w *Worker) Guardian() *slotguard.Guardian { return w.guardian }

// slotRegistry tells the guardian which connectors exist and which slots they use.
type slotRegistry struct{ w *Worker }

var _ slotguard.Registry = slotRegistry{}

// Connectors lists every configured connector, whatever its state: a stopped or paused connector still
// owns its slot.
func (r slotRegistry) Connectors() []slotguard.ConnectorSlot {
	w := r.w
	w.mu.Lock()
	type entry struct {
		name   string
		config map[string]string
		state  string
	}
	var entries []entry
	for _, c := range w.connectors {
		state := string(Stopped)
		if c.task != nil {
			s, _ := c.task.Status()
			state = string(s)
		}
		entries = append(entries, entry{c.name, c.config, state})
	}
	w.mu.Unlock()

	var out []slotguard.ConnectorSlot
	for _, e := range entries {
		resolved, err := w.ResolveConnectorConfig(e.config)
		if err != nil {
			continue
		}
		cfg, ok := postgresConfig(e.name, resolved)
		if !ok {
			continue // not a PostgreSQL connector, or one whose config its task refuses too
		}
		out = append(out, slotguard.ConnectorSlot{
			Connector: e.name, Server: cfg.Server(), Database: cfg.DBName, SlotName: cfg.SlotName,
			Publication: cfg.PublicationName, State: e.state, DSN: cfg.DSN(),
		})
	}
	return out
}

// dropSlotOnDelete is the delete hook for DELETE /connectors/{name}?dropSlot=true: it drops the deleted
// connector's slot, and the publication cdcd created for it unless another connector uses it.
func (w *Worker) dropSlotOnDelete(ctx context.Context, name string, props map[string]string, requested func(context.Context) bool) error {
	if !requested(ctx) {
		return nil
	}
	resolved, err := w.ResolveConnectorConfig(props)
	if err != nil {
		return err
	}
	cfg, ok := postgresConfig(name, resolved)
	if !ok {
		return nil // only PostgreSQL connectors have slots
	}
	return w.guardian.DropConnectorSlot(ctx, cfg.Server(), cfg.SlotName)
}

// EnableSlotDropOnDelete makes DELETE /connectors/{name} drop the connector's slot when requested (the
// REST layer's ?dropSlot=true).
func (w *Worker) EnableSlotDropOnDelete(requested func(context.Context) bool) {
	w.SetDeleteHook(func(ctx context.Context, name string, props map[string]string) error {
		return w.dropSlotOnDelete(ctx, name, props, requested)
	})
}

// isGuardianKey reports worker keys that belong to the slot guardian rather than to Connect.
func isGuardianKey(key string) bool { return strings.HasPrefix(key, slotguard.ConfigPrefix) }

// postgresConfig parses a resolved config when it is a valid PostgreSQL connector's.
func postgresConfig(name string, resolved map[string]string) (*postgres.Config, bool) {
	if findPlugin(resolved["connector.class"]) != postgresPlugin {
		return nil, false
	}
	cfg, err := postgres.ParseConfig(name, resolved, slog.New(slog.DiscardHandler))
	return cfg, err == nil
}
