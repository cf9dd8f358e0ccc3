package postgres

import (
	"slices"
	"testing"

	"github.com/cdcd/cdcd/source"
)

func TestVersionStringNamesTheRelease(t *testing.T) {
	for num, want := range map[int]string{130022: "13.22", 180000: "18.0", 120019: "12.19", 90624: "9.6.24", 100023: "10.23"} {
		if got := versionString(num); got != want {
			t.Errorf("versionString(%d) = %q, want %q", num, got, want)
		}
	}
}

func TestCheckVersionRefusesServersBefore13(t *testing.T) {
	for _, num := range []int{130000, 130022, 150018, 180000} {
		if err := checkVersion(num, "db:5432/app"); err != nil {
			t.Errorf("checkVersion(%d) = %v, want nil", num, err)
		}
	}
	err := checkVersion(120019, "db:5432/app")
	if err == nil || !source.IsFatal(err) {
		t.Fatalf("checkVersion(120019) = %v, want a fatal error", err)
	}
	if want := "PostgreSQL 12.19 at db:5432/app is not supported; cdcd needs 13 or newer"; err.Error() != want {
		t.Errorf("checkVersion(120019) = %q, want %q", err, want)
	}
}

// TestPluginArgsFollowTheVersion: PostgreSQL 13's pgoutput fails START_REPLICATION on an option it does not
// know ("unrecognized pgoutput option: messages").
func TestPluginArgsFollowTheVersion(t *testing.T) {
	for num, want := range map[int][]string{130022: nil, 140019: {"messages 'true'"}, 180000: {"messages 'true'"}} {
		if got := (serverInfo{versionNum: num}).pluginArgs(); !slices.Equal(got, want) {
			t.Errorf("pluginArgs on %d = %q, want %q", num, got, want)
		}
	}
}
