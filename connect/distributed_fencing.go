package connect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"github.com/cdcd/cdcd/connect/cluster"
)

// This file is the zombie fencing of an exactly-once cluster as Connect's DistributedHerder does it
// (doFenceZombieSourceTasks, ZombieFencing): the leader fences the producers of a connector's earlier task
// generation and then writes the connector's task count record ("tasks-fencing-<name>") to the config
// topic. A task whose configs were committed after the last such record ("pending fencing") starts only
// after a round wrote one. Java workers read the record the same way, so a cluster handed over between
// Connect and cdcd agrees on which generations are fenced.

// fencingRound is DistributedHerder.doFenceZombieSourceTasks on the leader; NotLeader elsewhere. Connect's
// round fences the transactional ids of the generation the last task count record counted, unless fencing
// is not pending or both that generation and the current one hold one task (the new task's own
// InitProducerId fences the old one then); it then writes the current task count, when pending. force
// fences every task's producer in any case (what an operator's PUT /connectors/{name}/fence asks for) and
// then does the same bookkeeping.
//
// Rounds are serialised with the leader's commit records (taskWrites), so no commit falls between a
// round's generation check and its record, which Connect gets from its single herder thread.
func (d *Distributed) fencingRound(ctx context.Context, name string, force bool) error {
	d.stateMu.Lock()
	leader, leaderURL := d.leader, d.leaderURL
	d.stateMu.Unlock()
	if !leader {
		return &RequestError{Kind: NotLeader, Message: "Only the leader may perform zombie fencing.", Forward: leaderURL}
	}
	d.taskWrites.Lock()
	defer d.taskWrites.Unlock()
	snap, err := d.freshConfig(ctx)
	if err != nil {
		return err
	}
	props, ok := snap.Connectors[name]
	if !ok {
		return notFound("Connector %s not found", name)
	}
	fence, pending := fencingPlan(snap, name, force)
	if fence > 0 {
		resolved, err := d.w.ResolveConnectorConfig(props)
		if err != nil {
			return err
		}
		if err := d.w.fenceZombies(ctx, name, fence, resolved); err != nil {
			return err
		}
		after, err := d.freshConfig(ctx)
		if err != nil {
			return err
		}
		if after.TaskGenerations[name] > snap.TaskGenerations[name] {
			return &RequestError{Kind: Conflict, Message: "Fencing failed because new task configurations were generated for the connector"}
		}
	}
	if !pending {
		d.log.Debug("skipping the task count record: every earlier task generation is fenced", "connector", name)
		return nil
	}
	if err := d.stores.Configs.PutTaskCountRecord(ctx, name, len(snap.Tasks[name])); err != nil {
		return &RequestError{Kind: ServerError, Message: fmt.Sprintf("writing a task count record for connector %s to the config topic: %v", name, err)}
	}
	return nil
}

// fencingPlan is what a round does for a connector in snap: fence the producers of tasks 0 to fence-1, and
// write a task count record when pending (see fencingRound).
func fencingPlan(snap cluster.ConfigSnapshot, name string, force bool) (fence int, pending bool) {
	taskCount := len(snap.Tasks[name])
	record, recorded := snap.TaskCountRecords[name]
	pending = snap.PendingFencing[name]
	if pending && recorded && (record != 1 || taskCount != 1) {
		fence = record
	}
	if force {
		fence = max(record, taskCount, 1)
	}
	return fence, pending
}

// preflightFencing runs before an exactly-once task of this worker opens its transactional producer
// (ExactlyOnceWorkerSourceTask.prepareToInitializeTask): the leader runs the connector's fencing round,
// here or, asked through its PUT /connectors/{name}/fence, on another worker, as Connect's followers ask.
func (d *Distributed) preflightFencing(ctx context.Context, name string) error {
	d.stateMu.Lock()
	leader, leaderURL := d.leader, d.leaderURL
	d.stateMu.Unlock()
	var err error
	if leader {
		err = d.fencingRound(ctx, name, false)
	} else {
		err = d.leaderRequest(ctx, leaderURL, http.MethodPut, []string{"connectors", name, "fence"}, nil)
	}
	if err != nil {
		return fmt.Errorf("failed to perform round of zombie fencing: %w", err)
	}
	return nil
}

// leaderRequest sends an internal request to the leader's REST API at leaderURL (forward=true, as Connect's
// followers send theirs), signed with the group's session key, and fails unless it answers 2xx; the error
// carries the answer's message.
func (d *Distributed) leaderRequest(ctx context.Context, leaderURL, method string, path []string, body []byte) error {
	if leaderURL == "" {
		return fmt.Errorf("no leader known yet")
	}
	target, err := url.JoinPath(leaderURL, path...)
	if err != nil {
		return err
	}
	var in io.Reader
	if body != nil {
		in = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, target+"?forward=true", in)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := d.signInternal(ctx, req.Header, body); err != nil {
		return err
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 300 {
		return nil
	}
	var answer struct {
		Message string `json:"message"`
	}
	if raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10)); json.Unmarshal(raw, &answer) == nil && answer.Message != "" {
		return fmt.Errorf("the leader at %s answered %s: %s", leaderURL, resp.Status, answer.Message)
	}
	return fmt.Errorf("the leader at %s answered %s", leaderURL, resp.Status)
}
