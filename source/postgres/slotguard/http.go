package slotguard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
)

// SlotsHandler serves GET /slots: {"slots":[…],"servers":[…]}.
func (g *Guardian) SlotsHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		slots := g.Slots()
		if slots == nil {
			slots = []SlotReport{}
		}
		servers := g.Servers()
		if servers == nil {
			servers = []ServerReport{}
		}
		writeJSON(w, http.StatusOK, struct {
			Slots   []SlotReport   `json:"slots"`
			Servers []ServerReport `json:"servers"`
		}{slots, servers})
	})
}

// ConnectorSlotResponse is the body of GET /connectors/{name}/slot. Slot is null while the slot does not
// exist (not created yet, or dropped) or its server has not been read yet.
type ConnectorSlotResponse struct {
	Connector string      `json:"connector"`
	State     string      `json:"state"`
	Server    string      `json:"server"`
	Database  string      `json:"database"`
	SlotName  string      `json:"slot_name"`
	Slot      *SlotReport `json:"slot"`
}

// ConnectorSlotHandler serves GET /connectors/{name}/slot; mount it on a pattern with a {name} wildcard.
// An unknown connector gets Kafka Connect's 404 body.
func (g *Guardian) ConnectorSlotHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := r.PathValue("name")
		connectors := g.registry.Connectors()
		i := slices.IndexFunc(connectors, func(c ConnectorSlot) bool { return c.Connector == name })
		if i < 0 {
			writeJSON(w, http.StatusNotFound, map[string]any{"error_code": http.StatusNotFound, "message": fmt.Sprintf("Connector %s not found", name)})
			return
		}
		c := connectors[i]
		resp := ConnectorSlotResponse{Connector: c.Connector, State: c.State, Server: hideSecrets(c.Server, connectors[i:i+1]),
			Database: hideSecrets(c.Database, connectors[i:i+1]), SlotName: c.SlotName}
		for _, s := range g.Slots() {
			if s.Server == c.Server && s.Name == c.SlotName {
				resp.Slot = &s
				break
			}
		}
		writeJSON(w, http.StatusOK, resp)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, `{"error_code":500,"message":"encoding the response failed"}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}
