package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/protocol/heartbeat"
	"github.com/segmentio/kafka-go/protocol/joingroup"
	"github.com/segmentio/kafka-go/protocol/leavegroup"
	"github.com/segmentio/kafka-go/protocol/syncgroup"
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
	// Compatible is set when the group chose the "compatible" protocol (a Java member with
	// connect.protocol=compatible): Connect checks no internal request's signature then (KIP-507 needs
	// "sessioned").
	Compatible bool
	// ConfigOffset is the configuration the assignment was computed from; Configs has been read at
	// least this far when OnAssignment is called (it may have read further).
	ConfigOffset int64
	Assigned     []Item // newly owned: start these
	Revoked      []Item // no longer owned: stop these before OnAssignment returns
	Owned        []Item // everything owned once Revoked are stopped and Assigned started
}

// MemberConfig configures a Member. The timeouts take Connect's defaults when zero.
type MemberConfig struct {
	Brokers []string
	// Transport carries every request of the member, e.g. one set up with TLS and SASL and shared
	// by all of a worker's clients. nil uses a kafka-go Transport with its defaults, of the
	// member's own, closed when Run ends.
	Transport kafkago.RoundTripper
	// ClientID is sent with every request of the member's own transport; a Transport given above
	// sends its own.
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

// Member is one worker in group.id, speaking Connect's group protocol with kafka-go's raw protocol
// requests where its typed ones fit only the "consumer" protocol type (JoinGroup's and SyncGroup's
// metadata and assignments are Connect's bytes, see protocol.go).
//
// Fencing: a member that cannot prove its membership (no successful heartbeat or sync) for
// session.timeout.ms minus heartbeat.interval.ms revokes all its work through OnAssignment, before
// the broker can expire its session and the leader hand the work to another member. Combined with the
// assignor's rules, no item has two owners as long as OnAssignment stops revoked work promptly.
// While a JoinGroup or SyncGroup is pending the broker keeps the member, so fencing waits for its
// outcome.
type Member struct {
	cfg      MemberConfig
	cl       client
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
	return &Member{
		cfg: cfg,
		// The member needs the brokers from the metadata, to reach coordinators, and no topic.
		cl:         newClient(cfg.Brokers, cfg.Transport, cfg.ClientID, []string{}),
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

// kafka-go's transport does not retry: every request is sent once, bounded as below, and the
// member's own loops retry, so they notice failures in time to fence. A rebalance that fails is
// retried after retryBackoff, doubling up to heartbeat.interval.ms; a heartbeat that fails, at the
// next tick.
const (
	// rebalanceLapse is added to rebalance.timeout.ms for a JoinGroup or SyncGroup: the coordinator
	// holds a JoinGroup until every member rejoined, and a SyncGroup until the leader's assignments
	// are in, each at most rebalance.timeout.ms (Java's JOIN_GROUP_TIMEOUT_LAPSE).
	rebalanceLapse = 5 * time.Second
	leaveTimeout   = 5 * time.Second // for the LeaveGroup sent when Run ends
	configTimeout  = 3 * time.Second // reading configs the leader assigned from (worker.sync.timeout.ms)
)

// Run joins the group and keeps the membership until ctx ends; then it revokes everything through
// OnAssignment, leaves the group and closes its client. It returns ctx's error.
func (m *Member) Run(ctx context.Context) error {
	defer m.cl.close()
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
		case errors.Is(err, kafkago.RebalanceInProgress):
			m.log.Debug("group rebalance restarted; rejoining", "err", err)
		default:
			failures++
			m.log.Log(ctx, streakLevel(failures), "group rebalance failed; retrying", "err", err, "failures", failures)
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
	// Raw, not kafka-go's typed LeaveGroup, which reports the misplaced error code.
	req := &leavegroup.Request{GroupID: m.cfg.GroupID, Members: []leavegroup.RequestMember{{MemberID: id}}}
	r, err := m.cl.roundTrip(context.Background(), leaveTimeout, req)
	if err == nil {
		resp := r.(*leavegroup.Response)
		err = kafkaError(misplacedErrorCode(resp.ThrottleTimeMS))
		if err == nil && len(resp.Members) == 1 {
			err = kafkaError(resp.Members[0].ErrorCode) // from version 3 on, per member
		}
	}
	if err != nil {
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
	m.generation = join.GenerationID
	m.mu.Unlock()

	protocol := join.ProtocolName
	if protocol == "" { // null only in an error response, which join does not return
		protocol = protocolSessioned
	}
	version := versionSessioned
	if protocol != protocolSessioned {
		version = versionCompatible
	}
	req := &syncgroup.Request{
		GroupID:      m.cfg.GroupID,
		GenerationID: join.GenerationID,
		MemberID:     join.MemberID,
		ProtocolType: protocolType,
		ProtocolName: protocol,
	}
	if join.LeaderID == join.MemberID {
		req.Assignments = m.lead(ctx, join, version)
	}
	sent := time.Now()
	// Members waiting for the leader's assignments count as alive: the wait needs no heartbeats.
	r, err := m.cl.roundTrip(ctx, m.cfg.RebalanceTimeout+rebalanceLapse, req)
	if err != nil {
		return fmt.Errorf("sync group: %w", err)
	}
	resp := r.(*syncgroup.Response)
	if err := kafkaError(resp.ErrorCode); err != nil {
		if errors.Is(err, kafkago.UnknownMemberId) || errors.Is(err, kafkago.IllegalGeneration) {
			m.revokeAll()
		}
		if errors.Is(err, kafkago.UnknownMemberId) {
			m.mu.Lock()
			m.memberID = ""
			m.mu.Unlock()
		}
		return fmt.Errorf("sync group: %w", err)
	}
	m.proven(sent)
	a, err := decodeAssignment(resp.Assignments)
	if err != nil {
		return fmt.Errorf("sync group: %w", err)
	}
	return m.apply(ctx, join, a)
}

// join sends JoinGroup until the coordinator accepts this member, answering MEMBER_ID_REQUIRED.
// kafka-go's typed JoinGroup would encode the consumer protocol's metadata, so the request is raw.
func (m *Member) join(ctx context.Context) (*joingroup.Response, error) {
	for {
		meta := workerMetadata{URL: m.cfg.URL, ConfigOffset: m.cfg.Configs.Snapshot().Offset}
		m.mu.Lock()
		if m.hasAlloc {
			meta.Allocation = &assignment{Leader: m.leaderID, LeaderURL: m.leaderURL, ConfigOffset: m.offset, Assigned: slices.Clone(m.owned)}
		}
		memberID := m.memberID
		m.mu.Unlock()

		req := &joingroup.Request{
			GroupID:            m.cfg.GroupID,
			SessionTimeoutMS:   int32(m.cfg.SessionTimeout.Milliseconds()),
			RebalanceTimeoutMS: int32(m.cfg.RebalanceTimeout.Milliseconds()),
			MemberID:           memberID,
			ProtocolType:       protocolType,
			Protocols: []joingroup.RequestProtocol{
				{Name: protocolSessioned, Metadata: encodeMetadata(versionSessioned, meta)},
				{Name: protocolCompatible, Metadata: encodeMetadata(versionCompatible, meta)},
			},
		}
		r, err := m.cl.roundTrip(ctx, m.cfg.RebalanceTimeout+rebalanceLapse, req)
		if err != nil {
			return nil, fmt.Errorf("join group: %w", err)
		}
		resp := r.(*joingroup.Response)
		switch err := kafkaError(resp.ErrorCode); {
		case err == nil:
			return resp, nil
		case errors.Is(err, kafkago.MemberIDRequired):
			m.mu.Lock()
			m.memberID = resp.MemberID
			m.mu.Unlock()
		case errors.Is(err, kafkago.UnknownMemberId):
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
func (m *Member) lead(ctx context.Context, join *joingroup.Response, version int16) []syncgroup.RequestAssignment {
	members := make([]memberState, 0, len(join.Members))
	var maxOffset int64 = -1
	leaderURL := ""
	for _, jm := range join.Members {
		meta, err := decodeMetadata(jm.Metadata)
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
	out := make([]syncgroup.RequestAssignment, 0, len(members))
	base := assignment{Leader: join.LeaderID, LeaderURL: leaderURL, ConfigOffset: snap.Offset}
	if snap.Offset < maxOffset {
		base.Error = assignmentConfigError
		for _, st := range members {
			out = append(out, syncgroup.RequestAssignment{MemberID: st.id, Assignment: encodeAssignment(version, base)})
		}
		return out
	}
	p := m.assignor.assign(time.Now(), join.GenerationID, members, configuredItems(snap))
	for _, st := range members {
		a := base
		a.Assigned, a.Revoked = p.assigned[st.id], p.revoked[st.id]
		a.Delay = int32(p.delay.Milliseconds())
		out = append(out, syncgroup.RequestAssignment{MemberID: st.id, Assignment: encodeAssignment(version, a)})
	}
	m.log.Debug("assigned work as leader", "generation", join.GenerationID, "members", len(members), "delay", p.delay)
	return out
}

// apply folds an assignment into the member's work and reports it. It returns nil when the member
// may settle into heartbeats; a rejoin is requested when revocations must take effect, when the
// assignment said to come back after a delay, or when the configs disagree.
func (m *Member) apply(ctx context.Context, join *joingroup.Response, a assignment) error {
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
		Generation:   join.GenerationID,
		MemberID:     join.MemberID,
		Leader:       a.Leader == join.MemberID,
		LeaderURL:    a.LeaderURL,
		Compatible:   join.ProtocolName == protocolCompatible,
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
		sent := time.Now()
		err := m.sendHeartbeat(ctx)
		if err == nil {
			failures = 0
		}
		switch {
		case err == nil:
			m.proven(sent)
		case errors.Is(err, kafkago.RebalanceInProgress):
			m.proven(sent)
			return
		case errors.Is(err, kafkago.UnknownMemberId), errors.Is(err, kafkago.IllegalGeneration), errors.Is(err, kafkago.FencedInstanceID):
			m.log.Info("group membership lost; stopping all work and rejoining", "err", err)
			m.revokeAll()
			if !errors.Is(err, kafkago.IllegalGeneration) {
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
			m.log.Log(ctx, streakLevel(failures), "heartbeat failed", "err", err, "failures", failures)
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

// sendHeartbeat sends one heartbeat for the current generation, bounded by heartbeat.interval.ms so
// that a lost one is followed by the next in time. It finds the coordinator first: kafka-go's
// transport routes JoinGroup, SyncGroup and LeaveGroup to the coordinator (they implement
// protocol.GroupMessage) but sends a Heartbeat, whose request type lacks the Group method, to any
// bootstrap broker, which would answer NOT_COORDINATOR unless it happened to be the coordinator.
func (m *Member) sendHeartbeat(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, m.cfg.HeartbeatInterval)
	defer cancel()
	coord, err := m.cl.FindCoordinator(ctx, &kafkago.FindCoordinatorRequest{Key: m.cfg.GroupID, KeyType: kafkago.CoordinatorKeyTypeConsumer})
	if err == nil {
		err = coord.Error
	}
	if err != nil {
		return fmt.Errorf("find the group coordinator: %w", err)
	}
	m.mu.Lock()
	req := &heartbeat.Request{GroupID: m.cfg.GroupID, GenerationID: m.generation, MemberID: m.memberID}
	m.mu.Unlock()
	// The transport sends a request given one broker's address to that broker. Raw, not kafka-go's
	// typed Heartbeat, which reports the misplaced error code.
	addr := kafkago.TCP(net.JoinHostPort(coord.Coordinator.Host, strconv.Itoa(coord.Coordinator.Port)))
	resp, err := m.cl.Transport.RoundTrip(ctx, addr, req)
	if err != nil {
		return err
	}
	return kafkaError(misplacedErrorCode(resp.(*heartbeat.Response).ThrottleTimeMs))
}

// misplacedErrorCode is the error code of a Heartbeat or LeaveGroup response as kafka-go v0.4.51
// decodes it, from the field it calls the throttle time. kafka-go declares both responses with
// error_code before throttle_time_ms, but from version 1 on Kafka sends throttle_time_ms first
// (segmentio/kafka-go#1371): what kafka-go calls the error code holds the throttle's two high
// bytes, and what it calls the throttle its two low bytes followed by the real error code. The
// transport always picks version 1 or later, which every broker since Kafka 0.11 has.
// TestKafkaGoMisplacesGroupErrorCodes pins this down, so that a kafka-go that fixes the order fails
// that test instead of this member.
func misplacedErrorCode(throttleField int32) int16 { return int16(uint16(throttleField)) }

// streakLevel is the level for the nth failure in a row of a rebalance or heartbeat: the first is
// worth a warning, the rest repeat it.
func streakLevel(failures int) slog.Level {
	if failures == 1 {
		return slog.LevelWarn
	}
	return slog.LevelDebug
}
