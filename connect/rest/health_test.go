package rest

import (
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/cdcd/cdcd/connect"
)

// failingHerder is a herder with one FAILED task.
type failingHerder struct{ fakeHerder }

func (failingHerder) FailedTasks() []connect.TaskState {
	return []connect.TaskState{{Connector: "pg", Task: 0, State: connect.Failed, Trace: "cannot connect to db:5432"}}
}

// TestHealthListsFailedTasks: GET /health keeps Connect's 200 {"status":"healthy",…} while the worker
// runs, and adds the FAILED tasks with their traces under failed_tasks; with none, the body is Connect's.
func TestHealthListsFailedTasks(t *testing.T) {
	s := NewServer(&failingHerder{}, ServerInfo{}, slog.New(slog.DiscardHandler))
	s.SetReady()
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest("GET", "/health", nil))
	want := `{"status":"healthy","message":"Worker has completed startup and is ready to handle requests.","failed_tasks":[{"connector":"pg","task":0,"state":"FAILED","trace":"cannot connect to db:5432"}]}`
	if rec.Code != 200 || rec.Body.String() != want {
		t.Errorf("GET /health with a failed task: %d %s, want 200 %s", rec.Code, rec.Body.String(), want)
	}
}
