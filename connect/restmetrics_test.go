package connect

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// TestRESTRequestSeriesAreBounded: made-up methods (any token is a valid HTTP method) and odd status codes
// add no series beyond "other"; before, each method was a series of its own, kept for good.
func TestRESTRequestSeriesAreBounded(t *testing.T) {
	code := 0
	h := CountRESTRequests(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }))
	for i := range 500 {
		code = []int{200, 401, 999, 700}[i%4]
		req := httptest.NewRequest("GET", "/connectors", nil)
		req.Method = "M" + strconv.Itoa(i) + strings.Repeat("X", i)
		h.ServeHTTP(httptest.NewRecorder(), req)
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("DELETE", "/connectors/pg", nil))
	if n := testutil.CollectAndCount(restRequests); n > 4 {
		t.Fatalf("%d series after 500 made-up methods; want at most 4 (other × 200, 401, other; DELETE)", n)
	}
	for _, want := range []struct{ method, code string }{{"other", "200"}, {"other", "401"}, {"other", "other"}} {
		if v := testutil.ToFloat64(restRequests.WithLabelValues(want.method, want.code)); v < 125 {
			t.Errorf("%s %s counted %v times, want 125 or more", want.method, want.code, v)
		}
	}
}
