package kafka

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/cdcd/cdcd/e2e/testenv"
	"github.com/cdcd/cdcd/sink"
	"github.com/cdcd/cdcd/source"
)

// TestRealKafkaMissingACLsFailForGood: on the SASL_SSL listener, as the one principal whose ACLs the test
// bed's authorizer enforces, a transactional producer that may describe but not write its
// TransactionalId, or a topic, fails for good (the task is not retried), naming the ACL to grant, as
// Connect's task fails on a TransactionalIdAuthorizationException or a TopicAuthorizationException.
func TestRealKafkaMissingACLsFailForGood(t *testing.T) {
	k := testenv.KafkaSASLSSL(t)
	admin, err := kgo.NewClient(kgo.SeedBrokers(testenv.Kafka(t)...)) // PLAINTEXT: a super user
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	prefix := testenv.NewTopicPrefix(t)
	deniedID, deniedTopic, allowedTopic := prefix+"-denied-0", prefix+".denied", prefix+".allowed"
	for _, topic := range []string{deniedTopic, allowedTopic} {
		logCreateTopic(t, testenv.Kafka(t), topic, 1)
	}
	// DESCRIBE allowed, WRITE denied, on the one TransactionalId and the one topic.
	acls := kmsg.NewPtrCreateACLsRequest()
	for _, res := range []struct {
		kind kmsg.ACLResourceType
		name string
	}{{kmsg.ACLResourceTypeTransactionalId, deniedID}, {kmsg.ACLResourceTypeTopic, deniedTopic}} {
		for op, perm := range map[kmsg.ACLOperation]kmsg.ACLPermissionType{kmsg.ACLOperationDescribe: kmsg.ACLPermissionTypeAllow, kmsg.ACLOperationWrite: kmsg.ACLPermissionTypeDeny} {
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType = res.kind, res.name, kmsg.ACLResourcePatternTypeLiteral
			c.Principal, c.Host, c.Operation, c.PermissionType = "User:"+testenv.KafkaRestrictedUser, "*", op, perm
			acls.Creations = append(acls.Creations, c)
		}
	}
	resp, err := acls.RequestWith(t.Context(), admin)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range resp.Results {
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			if err == kerr.SecurityDisabled {
				t.Skip("the broker has no authorizer: restart it (e2e/services.sh stop kafka; start kafka) to get the test bed's")
			}
			t.Fatalf("creating the ACLs: %v", err)
		}
	}

	settings := map[string]string{
		"security.protocol": "SASL_SSL", "sasl.mechanism": "PLAIN", "ssl.truststore.type": "PEM", "ssl.truststore.location": k.TLS.CA,
		"sasl.jaas.config": fmt.Sprintf(`%s required username="%s" password="%s";`, plainLoginModule, testenv.KafkaRestrictedUser, testenv.KafkaRestrictedPassword),
	}
	for _, c := range []struct{ name, id, topic, grant string }{
		{"TransactionalId", deniedID, allowedTopic, "WRITE and DESCRIBE on the TransactionalId"},
		{"topic", prefix + "-allowed-0", deniedTopic, "WRITE on the connector's topics"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newTestWriter(t, Config{Brokers: k.Brokers, ClientID: "connector-producer-acl-0", TransactionalID: c.id, Producer: settings})
			res := newResult()
			err := w.Send(t.Context(), []sink.Record{{Topic: c.topic, Key: []byte("k"), Value: []byte("v")}}, res.done(t, 0))
			if err == nil {
				err = res.wait(t)[0]
			}
			if err == nil {
				ctx, cancel := context.WithTimeout(t.Context(), testTimeout)
				defer cancel()
				err = w.Commit(ctx, nil)
			}
			if err == nil || !strings.Contains(err.Error(), c.grant) {
				t.Fatalf("got %v, want an error naming %q", err, c.grant)
			}
			if !source.IsFatal(err) {
				t.Errorf("%v is retried: a missing ACL must fail the task for good", err)
			}
		})
	}
}
