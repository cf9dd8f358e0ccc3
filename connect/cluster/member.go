package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// ConfigReader is the configuration a member reports and, as leader, assigns from. *ConfigStore is one.
type ConfigReader interface {
	// Snapshot returns the configuration read so far. It must not block.
	Snapshot() ConfigSnapshot
	// ReadToEnd blocks until everything written before the call was read, or ctx ends.
	ReadToEnd(ctx context.Context) error
}

// Assignment is a member's share of the work after a rebalance, or after it lost its membership.
type Assignment struct {
	Generation int32 // the group generation; -1 when the member lost its membership
	MemberID   string
	Leader     bool   // this member leads the group
	LeaderURL  string // the leader's advertised REST URL, where requests only the leader serves go
	// ConfigOffset is the configuration the assignment was computed from; Configs has been read at
	// least this far when OnAssignment is called (it may have read further).
	ConfigOffset int64
	Assigned     []Item // newly owned: start these
	Revoked      []Item // no longer owned: stop these before OnAssignment returns
	Owned        []Item // everything owned once Revoked are stopped and Assigned started
}

// MemberConfig configures a Member. The timeouts take Connect's defaults when zero.
type MemberConfig struct {
	Brokers  []string
	ClientID string
	GroupID  string
	// URL is this worker's advertised REST URL, e.g. http://10.0.0.5:8083/ (Java sends it with the
	// trailing slash); other members forward leader-only requests to it.
	URL string

	SessionTimeout    time.Duration // session.timeout.ms, 10 s
	HeartbeatInterval time.Duration // heartbeat.interval.ms, 3 s
	RebalanceTimeout  time.Duration // rebalance.timeout.ms, 60 s
	// ScheduledRebalanceMaxDelay is scheduled.rebalance.max.delay.ms: how long a departed member's
	// work waits for it to come back. Zero hands it out at once (Connect's default is 5 min; see
	// MemberConfigFor).
	ScheduledRebalanceMaxDelay time.Duration

	Configs ConfigReader
	// OnAssignment is called from Run's goroutine after every completed rebalance, when the member
	// lost its membership (everything revoked: see Member) and when Run ends (everything revoked).
	// It must stop the revoked items before it returns; it may start the assigned ones asynchronously.
	// It may call the Member's accessors and RequestRejoin.
	OnAssignment func(Assignment)
	Logger       *slog.Logger
}

func (c *MemberConfig) withDefaults() {
	if c.SessionTimeout <= 0 {
		c.SessionTimeout = 10 * time.Second
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 3 * time.Second
	}
	if c.RebalanceTimeout <= 0 {
		c.RebalanceTimeout = 60 * time.Second
	}
	c.ScheduledRebalanceMaxDelay = max(c.ScheduledRebalanceMaxDelay, 0)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Member is one worker in group.id, speaking Connect's group protocol with raw requests (franz-go's
// group consumer only speaks the "consumer" protocol type).
//
// Fencing: a member that cannot prove its membership (no successful heartbeat or sync) for
// session.timeout.ms minus heartbeat.interval.ms revokes all its work through OnAssignment, before
// the broker can expire its session and the leader hand the work to another member. Combined with the
// assignor's rules, no item has two owners as long as OnAssignment stops revoked work promptly.
// While a JoinGroup is pending the broker keeps the member, so fencing waits for its outcome.
type Member struct {
	cfg      MemberConfig
	cl       *kgo.Client
	log      *slog.Logger
	assignor *assignor
	rejoinCh chan struct{}

	// Run's state; mu guards it for the accessors.
	mu         sync.Mutex
	memberID   string
	generation int32
	leaderID   string
	leaderURL  string
	offset     int64 // config offset of the last assignment
	owned      []Item
	hasAlloc   bool      // owned came from an assignment (metadata carries an allocation)
	proof      time.Time // send time of the last request that proved membership
}

// NewMember builds a member; nothing is sent until Run.
func NewMember(cfg MemberConfig) (*Member, error) {
	cfg.withDefaults()
	if cfg.GroupID == "" || cfg.Configs == nil || cfg.OnAssignment == nil {
		return nil, errors.New("cluster member: GroupID, Configs and OnAssignment are required")
	}
	if cfg.HeartbeatInterval >= cfg.SessionTimeout {
		return nil, fmt.Errorf("cluster member: heartbeat.interval.ms (%s) must be lower than session.timeout.ms (%s)", cfg.HeartbeatInterval, cfg.SessionTimeout)
	}
	hb, session := cfg.HeartbeatInterval, cfg.SessionTimeout
	opts := []kgo.Opt{
		kgo.SeedBrokers(cfg.Brokers...),
		// Retries inside the client stay short so the member's own loop sees failures in time to fence.
		kgo.RetryTimeoutFn(func(key int16) time.Duration {
			if key == (*kmsg.HeartbeatRequest)(nil).Key() {
				return hb
			}
			return session - hb
		}),
	}
	if cfg.ClientID != "" {
		opts = append(opts, kgo.ClientID(cfg.ClientID))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("cluster member: %w", err)
	}
	return &Member{
		cfg:        cfg,
		cl:         cl,
		log:        cfg.Logger.With("group", cfg.GroupID),
		assignor:   newAssignor(cfg.ScheduledRebalanceMaxDelay),
		rejoinCh:   make(chan struct{}, 1),
		generation: -1,
	}, nil
}

// LeaderURL returns the leader's advertised URL from the last assignment ("" before one).
func (m *Member) LeaderURL() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaderURL
}

// IsLeader says whether this member led the last completed rebalance.
func (m *Member) IsLeader() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.memberID != "" && m.leaderID == m.memberID
}

// Owned returns the items this member holds.
func (m *Member) Owned() []Item {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.owned)
}

// RequestRejoin asks for a rebalance, as Connect's herder does after reading a new or deleted
// connector or a task-config commit. It does not block.
func (m *Member) RequestRejoin() {
	select {
	case m.rejoinCh <- struct{}{}:
	default:
	}
}

const (
	retryBackoff  = 250 * time.Millisecond // after a failed rebalance, doubling up to heartbeat.interval.ms
	leaveTimeout  = 5 * time.Second        // for the LeaveGroup sent when Run ends
	configTimeout = 3 * time.Second        // reading configs the leader assigned from (worker.sync.timeout.ms)
)

// Run joins the group and keeps the membership until ctx ends; then it revokes everything through
// OnAssignment, leaves the group and closes its client. It returns ctx's error.
func (m *Member) Run(ctx context.Context) error {
	defer m.cl.Close()
	defer m.leave()
	failures := 0
	for ctx.Err() == nil {
		err := m.joinAndSync(ctx)
		switch {
		case err == nil:
			failures = 0
			m.heartbeat(ctx)
			continue
		case ctx.Err() != nil:
		case errors.Is(err, kerr.RebalanceInProgress):
			m.log.Debug("group rebalance restarted; rejoining", "err", err)
		default:
			failures++
			// The first failure of a streak is worth a warning; the rest repeat it.
			level := slog.LevelDebug
			if failures == 1 {
				level = slog.LevelWarn
			}
			m.log.Log(ctx, level, "group rebalance failed; retrying", "err", err, "failures", failures)
			m.fenceIfExpired()
			_ = sleep(ctx, min(retryBackoff<<min(failures-1, 5), m.cfg.HeartbeatInterval))
		}
	}
	return ctx.Err()
}

// leave revokes all work and tells the coordinator, so the group rebalances at once.
func (m *Member) leave() {
	m.revokeAll()
	m.mu.Lock()
	id := m.memberID
	m.memberID = ""
	m.mu.Unlock()
	if id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), leaveTimeout)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group = m.cfg.GroupID
	req.MemberID = id
	mem := kmsg.NewLeaveGroupRequestMember()
	mem.MemberID = id
	req.Members = append(req.Members, mem)
	if _, err := req.RequestWith(ctx, m.cl); err != nil {
		m.log.Warn("leaving the group", "err", err)
	}
}

// revokeAll gives up every item and forgets the generation: the member's next join starts afresh.
func (m *Member) revokeAll() {
	m.mu.Lock()
	owned := m.owned
	m.owned, m.hasAlloc, m.generation, m.leaderID = nil, false, -1, ""
	id := m.memberID
	m.mu.Unlock()
	if len(owned) > 0 {
		m.cfg.OnAssignment(Assignment{Generation: -1, MemberID: id, ConfigOffset: -1, Revoked: owned})
	}
}

// fenceIfExpired revokes everything when membership was last proven so long ago that the broker may
// expire the session within one more heartbeat interval.
func (m *Member) fenceIfExpired() {
	m.mu.Lock()
	expired := len(m.owned) > 0 && time.Since(m.proof) >= m.cfg.SessionTimeout-m.cfg.HeartbeatInterval
	m.mu.Unlock()
	if expired {
		m.log.Warn("group session may have expired: stopping all work before another member takes it")
		m.revokeAll()
		m.mu.Lock()
		m.memberID = ""
		m.mu.Unlock()
	}
}

func (m *Member) proven(sent time.Time) {
	m.mu.Lock()
	if sent.After(m.proof) {
		m.proof = sent
	}
	m.mu.Unlock()
}

// joinAndSync runs one rebalance: JoinGroup (computing every assignment when leader), SyncGroup,
// then hands the result to OnAssignment.
func (m *Member) joinAndSync(ctx context.Context) error {
	join, err := m.join(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.memberID = join.MemberID
	m.generation = join.Generation
	m.mu.Unlock()

	protocol := protocolSessioned
	if join.Protocol != nil {
		protocol = *join.Protocol
	}
	version := versionSessioned
	if protocol != protocolSessioned {
		version = versionCompatible
	}
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group = m.cfg.GroupID
	req.Generation = join.Generation
	req.MemberID = join.MemberID
	req.ProtocolType = kmsg.StringPtr(protocolType)
	req.Protocol = kmsg.StringPtr(protocol)
	if join.LeaderID == join.MemberID {
		req.GroupAssignment = m.lead(ctx, join, version)
	}
	sent := time.Now()
	resp, err := req.RequestWith(ctx, m.cl)
	if err != nil {
		return fmt.Errorf("sync group: %w", err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		if errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) {
			m.revokeAll()
		}
		if errors.Is(err, kerr.UnknownMemberID) {
			m.mu.Lock()
			m.memberID = ""
			m.mu.Unlock()
		}
		return fmt.Errorf("sync group: %w", err)
	}
	m.proven(sent)
	a, err := decodeAssignment(resp.MemberAssignment)
	if err != nil {
		return fmt.Errorf("sync group: %w", err)
	}
	return m.apply(ctx, join, a)
}

// join sends JoinGroup until the coordinator accepts this member, answering MEMBER_ID_REQUIRED.
func (m *Member) join(ctx context.Context) (*kmsg.JoinGroupResponse, error) {
	for {
		meta := workerMetadata{URL: m.cfg.URL, ConfigOffset: m.cfg.Configs.Snapshot().Offset}
		m.mu.Lock()
		if m.hasAlloc {
			meta.Allocation = &assignment{Leader: m.leaderID, LeaderURL: m.leaderURL, ConfigOffset: m.offset, Assigned: slices.Clone(m.owned)}
		}
		memberID := m.memberID
		m.mu.Unlock()

		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = m.cfg.GroupID
		req.SessionTimeoutMillis = int32(m.cfg.SessionTimeout.Milliseconds())
		req.RebalanceTimeoutMillis = int32(m.cfg.RebalanceTimeout.Milliseconds())
		req.MemberID = memberID
		req.ProtocolType = protocolType
		for _, p := range []struct {
			name    string
			version int16
		}{{protocolSessioned, versionSessioned}, {protocolCompatible, versionCompatible}} {
			rp := kmsg.NewJoinGroupRequestProtocol()
			rp.Name = p.name
			rp.Metadata = encodeMetadata(p.version, meta)
			req.Protocols = append(req.Protocols, rp)
		}
		resp, err := req.RequestWith(ctx, m.cl)
		if err != nil {
			return nil, fmt.Errorf("join group: %w", err)
		}
		switch err := kerr.ErrorForCode(resp.ErrorCode); {
		case err == nil:
			return resp, nil
		case errors.Is(err, kerr.MemberIDRequired):
			m.mu.Lock()
			m.memberID = resp.MemberID
			m.mu.Unlock()
		case errors.Is(err, kerr.UnknownMemberID):
			m.revokeAll()
			m.mu.Lock()
			m.memberID = ""
			m.mu.Unlock()
		default:
			return nil, fmt.Errorf("join group: %w", err)
		}
	}
}

// lead computes every member's assignment. When this leader's configuration is behind what some
// member reported and cannot catch up, every member gets CONFIG_MISMATCH and rejoins after reading.
func (m *Member) lead(ctx context.Context, join *kmsg.JoinGroupResponse, version int16) []kmsg.SyncGroupRequestGroupAssignment {
	members := make([]memberState, 0, len(join.Members))
	var maxOffset int64 = -1
	leaderURL := ""
	for _, jm := range join.Members {
		meta, err := decodeMetadata(jm.ProtocolMetadata)
		if err != nil {
			m.log.Warn("member metadata unreadable; treating the member as empty", "member", jm.MemberID, "err", err)
		}
		maxOffset = max(maxOffset, meta.ConfigOffset)
		if jm.MemberID == join.LeaderID {
			leaderURL = meta.URL
		}
		st := memberState{id: jm.MemberID}
		if meta.Allocation != nil {
			st.owned = meta.Allocation.Assigned
		}
		members = append(members, st)
	}
	snap := m.cfg.Configs.Snapshot()
	if snap.Offset < maxOffset {
		rctx, cancel := context.WithTimeout(ctx, configTimeout)
		if err := m.cfg.Configs.ReadToEnd(rctx); err != nil {
			m.log.Warn("leader could not read the config topic to its end", "err", err)
		}
		cancel()
		snap = m.cfg.Configs.Snapshot()
	}
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(members))
	base := assignment{Leader: join.LeaderID, LeaderURL: leaderURL, ConfigOffset: snap.Offset}
	if snap.Offset < maxOffset {
		base.Error = assignmentConfigError
		for _, st := range members {
			out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: st.id, MemberAssignment: encodeAssignment(version, base)})
		}
		return out
	}
	p := m.assignor.assign(time.Now(), join.Generation, members, configuredItems(snap))
	for _, st := range members {
		a := base
		a.Assigned, a.Revoked = p.assigned[st.id], p.revoked[st.id]
		a.Delay = int32(p.delay.Milliseconds())
		out = append(out, kmsg.SyncGroupRequestGroupAssignment{MemberID: st.id, MemberAssignment: encodeAssignment(version, a)})
	}
	m.log.Debug("assigned work as leader", "generation", join.Generation, "members", len(members), "delay", p.delay)
	return out
}

// apply folds an assignment into the member's work and reports it. It returns nil when the member
// may settle into heartbeats; a rejoin is requested when revocations must take effect, when the
// assignment said to come back after a delay, or when the configs disagree.
func (m *Member) apply(ctx context.Context, join *kmsg.JoinGroupResponse, a assignment) error {
	if a.Error == assignmentConfigError {
		rctx, cancel := context.WithTimeout(ctx, configTimeout)
		defer cancel()
		if err := m.cfg.Configs.ReadToEnd(rctx); err != nil {
			return fmt.Errorf("reading configs after the leader reported a mismatch: %w", err)
		}
		return errors.New("leader's configs were behind; rejoining")
	}
	if m.cfg.Configs.Snapshot().Offset < a.ConfigOffset {
		// Work is started only from the configs the leader assigned it from. An assignment left
		// unapplied is safe: this member keeps reporting what it owned before, so nothing it was
		// given or asked to give up goes to anyone else in the next round.
		rctx, cancel := context.WithTimeout(ctx, configTimeout)
		err := m.cfg.Configs.ReadToEnd(rctx)
		cancel()
		if err != nil {
			return fmt.Errorf("reading configs up to the assignment's offset %d: %w", a.ConfigOffset, err)
		}
	}
	m.mu.Lock()
	var revoked []Item
	owned := make([]Item, 0, len(m.owned)+len(a.Assigned))
	for _, it := range m.owned {
		if slices.Contains(a.Revoked, it) {
			revoked = append(revoked, it)
		} else {
			owned = append(owned, it)
		}
	}
	for _, it := range a.Assigned {
		if !slices.Contains(owned, it) {
			owned = append(owned, it)
		}
	}
	slices.SortFunc(owned, compareItems)
	m.owned, m.hasAlloc = owned, true
	m.leaderID, m.leaderURL, m.offset = a.Leader, a.LeaderURL, a.ConfigOffset
	m.mu.Unlock()

	m.cfg.OnAssignment(Assignment{
		Generation:   join.Generation,
		MemberID:     join.MemberID,
		Leader:       a.Leader == join.MemberID,
		LeaderURL:    a.LeaderURL,
		ConfigOffset: a.ConfigOffset,
		Assigned:     slices.Clone(a.Assigned),
		Revoked:      revoked,
		Owned:        slices.Clone(owned),
	})
	if len(a.Revoked) > 0 || m.cfg.Configs.Snapshot().Offset > a.ConfigOffset {
		m.RequestRejoin()
	}
	if a.Delay > 0 {
		time.AfterFunc(time.Duration(a.Delay)*time.Millisecond, m.RequestRejoin)
	}
	return nil
}

// heartbeat keeps the membership until a rebalance is needed or ctx ends.
func (m *Member) heartbeat(ctx context.Context) {
	ticker := time.NewTicker(m.cfg.HeartbeatInterval)
	defer ticker.Stop()
	failures := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.rejoinCh:
			return
		case <-ticker.C:
		}
		m.mu.Lock()
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = m.cfg.GroupID, m.generation, m.memberID
		m.mu.Unlock()
		sent := time.Now()
		hctx, cancel := context.WithTimeout(ctx, m.cfg.HeartbeatInterval)
		resp, err := req.RequestWith(hctx, m.cl)
		cancel()
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		if err == nil {
			failures = 0
		}
		switch {
		case err == nil:
			m.proven(sent)
		case errors.Is(err, kerr.RebalanceInProgress):
			m.proven(sent)
			return
		case errors.Is(err, kerr.UnknownMemberID), errors.Is(err, kerr.IllegalGeneration), errors.Is(err, kerr.FencedInstanceID):
			m.log.Info("group membership lost; stopping all work and rejoining", "err", err)
			m.revokeAll()
			if !errors.Is(err, kerr.IllegalGeneration) {
				m.mu.Lock()
				m.memberID = ""
				m.mu.Unlock()
			}
			return
		default:
			if ctx.Err() != nil {
				return
			}
			failures++
			level := slog.LevelDebug
			if failures == 1 {
				level = slog.LevelWarn
			}
			m.log.Log(ctx, level, "heartbeat failed", "err", err, "failures", failures)
			m.fenceIfExpired()
			m.mu.Lock()
			lost := m.memberID == ""
			m.mu.Unlock()
			if lost {
				return
			}
		}
	}
}
