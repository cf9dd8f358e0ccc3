package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

const (
	// postgresRoot holds Debian's PostgreSQL versions, one bin directory each.
	postgresRoot = "/usr/lib/postgresql"
	// postgresPackage is what the demo installs when no PostgreSQL is there.
	postgresPackage = "postgresql-15"
	// postgresStartTimeout bounds pg_ctl start -w and pg_ctl stop.
	postgresStartTimeout = 60 * time.Second
	// postgresOSUser runs the server when the demo runs as root, which PostgreSQL refuses.
	postgresOSUser = "postgres"
)

// postgresConf is appended to the throwaway cluster's postgresql.conf. The demo's data is
// thrown away, so durability settings are traded for speed.
const postgresConf = `
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
wal_level = logical
max_replication_slots = 4
max_wal_senders = 4
fsync = off
synchronous_commit = off
full_page_writes = off
`

// postgresServer is a private PostgreSQL cluster in a directory of its own, started with pg_ctl.
type postgresServer struct {
	binDir  string
	dir     string // owned by the server's OS user; holds data/, the socket and the log
	port    int
	runAsOS string // OS user to run the binaries as, "" for the current one
}

func (s *postgresServer) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *postgresServer) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// dsn is the superuser's connection string for database db (trust authentication).
func (s *postgresServer) dsn(db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.port, db)
}

// psqlCommand is the command a user can paste to look at the demo database.
func (s *postgresServer) psqlCommand() string {
	return fmt.Sprintf("%s -h 127.0.0.1 -p %d -U postgres demo", filepath.Join(s.binDir, "psql"), s.port)
}

// startPostgres initialises a cluster under parent/pg (parent must be enterable by other users)
// and starts it with logical decoding on a free port. Progress goes to out. On error nothing is
// left running.
func startPostgres(ctx context.Context, parent string, out io.Writer) (*postgresServer, error) {
	binDir, err := ensurePostgresBinaries(out)
	if err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &postgresServer{binDir: binDir, dir: filepath.Join(parent, "pg"), port: port}
	if err := os.Mkdir(s.dir, 0o700); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if os.Geteuid() == 0 {
		if err := chownToUser(s.dir, postgresOSUser); err != nil {
			return nil, err
		}
		s.runAsOS = postgresOSUser
	}
	if err := s.run(ctx, "initdb", "-D", s.dataDir(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8"); err != nil {
		return nil, err
	}
	conf, err := os.OpenFile(filepath.Join(s.dataDir(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	_, err = fmt.Fprintf(conf, postgresConf, port, s.dir)
	if err = errors.Join(err, conf.Close()); err != nil {
		return nil, fmt.Errorf("postgres: writing postgresql.conf: %w", err)
	}
	timeout := strconv.Itoa(int(postgresStartTimeout.Seconds()))
	if err := s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-l", s.logPath(), "-w", "-t", timeout, "start"); err != nil {
		// pg_ctl may give up while the server still comes up later.
		return nil, errors.Join(err, s.stop())
	}
	return s, nil
}

// createDatabase creates database name and returns a connection to it.
func (s *postgresServer) createDatabase(ctx context.Context, name string) (*pgx.Conn, error) {
	admin, err := pgx.Connect(ctx, s.dsn("postgres"))
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	_, err = admin.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	if err = errors.Join(err, admin.Close(ctx)); err != nil {
		return nil, fmt.Errorf("postgres: creating database %s: %w", name, err)
	}
	conn, err := pgx.Connect(ctx, s.dsn(name))
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return conn, nil
}

// stop shuts the server down with pg_ctl's fast mode (open sessions are ended, not waited for)
// and waits for it to exit. Stopping a server that is not running succeeds.
func (s *postgresServer) stop() error {
	if _, err := os.Stat(filepath.Join(s.dataDir(), "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), postgresStartTimeout+5*time.Second)
	defer cancel()
	timeout := strconv.Itoa(int(postgresStartTimeout.Seconds()))
	return s.run(ctx, "pg_ctl", "-D", s.dataDir(), "-m", "fast", "-w", "-t", timeout, "stop")
}

// run runs one of the PostgreSQL programs, as the server's OS user when there is one, from a
// directory that user can read, in a process group of its own so that a Ctrl-C meant for the
// demo reaches the server only through stop.
func (s *postgresServer) run(ctx context.Context, program string, args ...string) error {
	name, argv := filepath.Join(s.binDir, program), args
	if s.runAsOS != "" {
		name, argv = "runuser", append([]string{"-u", s.runAsOS, "--", name}, args...)
	}
	cmd := exec.CommandContext(ctx, name, argv...)
	cmd.Dir = s.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	output, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("postgres: %s: %w\n%s", program, err, strings.TrimSpace(string(output)))
	}
	return nil
}

// ensurePostgresBinaries returns a PostgreSQL bin directory, installing Debian's package first
// when there is none and the demo runs as root.
func ensurePostgresBinaries(out io.Writer) (string, error) {
	if dir, ok := findPostgresBin(postgresRoot); ok {
		return dir, nil
	}
	if os.Geteuid() != 0 {
		return "", fmt.Errorf("postgres: no PostgreSQL binaries under %s; install them (apt-get install -y %s) or run the demo as root to have it do so",
			postgresRoot, postgresPackage)
	}
	fmt.Fprintf(out, "PostgreSQL is not installed: running apt-get install -y %s\n", postgresPackage)
	if err := aptInstall(out, postgresPackage); err != nil {
		return "", err
	}
	if dir, ok := findPostgresBin(postgresRoot); ok {
		return dir, nil
	}
	return "", fmt.Errorf("postgres: still no binaries under %s after installing %s", postgresRoot, postgresPackage)
}

// findPostgresBin returns root/VERSION/bin holding a postgres binary: version 15 (the one cdcd is
// tested against) when present, else the highest version.
func findPostgresBin(root string) (string, bool) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", false
	}
	var versions []int
	for _, e := range entries {
		v, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if _, err := os.Stat(filepath.Join(root, e.Name(), "bin", "postgres")); err == nil {
			versions = append(versions, v)
		}
	}
	if len(versions) == 0 {
		return "", false
	}
	chosen := slices.Max(versions)
	if slices.Contains(versions, 15) {
		chosen = 15
	}
	return filepath.Join(root, strconv.Itoa(chosen), "bin"), true
}

// aptInstall installs Debian packages. Debian's postinst scripts would start the packaged
// server on the default port; a policy-rc.d that says no (only if none exists) prevents that.
func aptInstall(out io.Writer, packages ...string) error {
	const policy = "/usr/sbin/policy-rc.d"
	if _, err := os.Stat(policy); errors.Is(err, os.ErrNotExist) {
		if err := os.WriteFile(policy, []byte("#!/bin/sh\nexit 101\n"), 0o755); err == nil {
			defer os.Remove(policy)
		}
	}
	apt := func(args ...string) error {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = out, out
		return cmd.Run()
	}
	install := append([]string{"install", "-y", "--no-install-recommends"}, packages...)
	if err := apt(install...); err == nil {
		return nil
	}
	// A fresh machine's package lists may be missing or stale.
	if err := apt("update"); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	if err := apt(install...); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(packages, " "), err)
	}
	return nil
}

func chownToUser(path, username string) error {
	u, err := user.Lookup(username)
	if err != nil {
		return fmt.Errorf("postgres: PostgreSQL refuses to run as root and there is no %q user to run it as: %w", username, err)
	}
	uid, errU := strconv.Atoi(u.Uid)
	gid, errG := strconv.Atoi(u.Gid)
	if err := errors.Join(errU, errG); err != nil {
		return fmt.Errorf("postgres: user %s: %w", username, err)
	}
	if err := os.Chown(path, uid, gid); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	return nil
}

// freePort asks the kernel for a free TCP port on 127.0.0.1. Another process could take it
// before the server binds it; on a demo machine that is unlikely enough.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
