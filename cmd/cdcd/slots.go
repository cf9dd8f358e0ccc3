package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/cdcd/cdcd/source/postgres/slotguard"
	"github.com/jackc/pgx/v5"
)

// slotsUsageLines are the subcommand's usage; slotsUsage, with its line end, belongs in the binary's usage text.
const (
	slotsUsageLines = `  cdcd slots list --dsn postgres://USER@HOST:PORT/DB
  cdcd slots drop --dsn postgres://USER@HOST:PORT/DB [--yes] SLOT`
	slotsUsage = slotsUsageLines + "\n"
)

// errUsage makes the caller print the usage text.
var errUsage = errors.New("usage:\n" + slotsUsageLines)

// slotsCommand runs `cdcd slots list|drop` with args after "slots". stdin answers the drop's confirmation.
func slotsCommand(args []string, stdin io.Reader, stdout io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if len(args) == 0 {
		return errUsage
	}
	fs := flag.NewFlagSet("cdcd slots "+args[0], flag.ContinueOnError)
	fs.SetOutput(io.Discard) // the returned error says what is wrong
	dsn := fs.String("dsn", "", "connection string of the server")
	yes := fs.Bool("yes", false, "drop without asking")
	positional, err := parseInterspersed(fs, args[1:])
	if err != nil {
		return fmt.Errorf("%w\n%s", err, errUsage)
	}
	if *dsn == "" {
		return fmt.Errorf("--dsn is required\n%w", errUsage)
	}
	switch {
	case args[0] == "list" && len(positional) == 0:
		return withConn(ctx, *dsn, func(conn *pgx.Conn) error { return listSlots(ctx, conn, stdout) })
	case args[0] == "drop" && len(positional) == 1:
		return withConn(ctx, *dsn, func(conn *pgx.Conn) error { return dropSlot(ctx, conn, positional[0], *yes, stdin, stdout) })
	}
	return errUsage
}

// parseInterspersed lets flags follow the slot name (`drop NAME --yes`), which the flag package alone does not.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func withConn(ctx context.Context, dsn string, f func(*pgx.Conn) error) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return fmt.Errorf("connecting to PostgreSQL: %w", err)
	}
	defer conn.Close(context.Background())
	return f(conn)
}

func listSlots(ctx context.Context, conn *pgx.Conn, stdout io.Writer) error {
	_, slots, err := slotguard.Inspect(ctx, conn)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SLOT\tTYPE\tDATABASE\tPLUGIN\tACTIVE\tRESTART_LSN\tCONFIRMED_FLUSH_LSN\tRETAINED_WAL\tWAL_STATUS\tSAFE_WAL_SIZE")
	for _, s := range slots {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%t\t%s\t%s\t%s\t%s\t%s\n", s.Name, s.Type, orDash(s.Database), orDash(s.Plugin), s.Active,
			orDash(s.RestartLSN), orDash(s.ConfirmedFlushLSN), bytesText(s.RetainedWALBytes), orDash(s.WALStatus), bytesText(s.SafeWALSize))
	}
	return tw.Flush()
}

// dropSlot asks before dropping unless yes; it refuses an active slot (slotguard.DropSlot checks again at
// the drop itself).
func dropSlot(ctx context.Context, conn *pgx.Conn, name string, yes bool, stdin io.Reader, stdout io.Writer) error {
	_, slots, err := slotguard.Inspect(ctx, conn)
	if err != nil {
		return err
	}
	i := indexSlot(slots, name)
	if i < 0 {
		return fmt.Errorf("%w: %q", slotguard.ErrSlotNotFound, name)
	}
	s := slots[i]
	if s.Active {
		return fmt.Errorf("%w: refusing to drop %q while a consumer streams from it; stop the consumer first", slotguard.ErrSlotActive, name)
	}
	if !yes {
		fmt.Fprintf(stdout, "Drop %s replication slot %q (database %s, retaining %s of WAL)? Its consumer can no longer resume from it. [y/N] ",
			s.Type, name, orDash(s.Database), bytesText(s.RetainedWALBytes))
		answer, _ := bufio.NewReader(stdin).ReadString('\n')
		if a := strings.ToLower(strings.TrimSpace(answer)); a != "y" && a != "yes" {
			fmt.Fprintln(stdout, "Not dropped.")
			return nil
		}
	}
	if _, err := slotguard.DropSlot(ctx, conn, name); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Dropped replication slot %q.\n", name)
	return nil
}

func indexSlot(slots []slotguard.Slot, name string) int {
	for i, s := range slots {
		if s.Name == name {
			return i
		}
	}
	return -1
}

func orDash(s *string) string {
	if s == nil || *s == "" {
		return "-"
	}
	return *s
}

// bytesText shows a byte count the way PostgreSQL's pg_size_pretty does, roughly.
func bytesText(n *int64) string {
	if n == nil {
		return "-"
	}
	v, unit := float64(*n), "bytes"
	for _, next := range []string{"kB", "MB", "GB", "TB"} {
		if v < 10*1024 {
			break
		}
		v, unit = v/1024, next
	}
	return strconv.FormatFloat(v, 'f', 0, 64) + " " + unit
}
