package kafka

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Credentials of the tests: no error, log line or String may carry a secret key or session token.
const (
	iamKeyID        = "AKIDCDCDTEST"
	iamSecretKey    = "cdcd-aws-s3cret-access-key"
	iamSessionToken = "cdcd-aws-s3ssion-token"
	mskHost         = "b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com"
)

var iamSigningTime = time.Date(2020, 10, 22, 12, 34, 56, 0, time.UTC)

// isolateAWS clears every setting of the AWS SDK's environment for the test, points its shared files
// at nothing and turns the EC2 instance metadata off, so that only what the test sets is found.
func isolateAWS(t *testing.T) {
	t.Helper()
	for _, k := range []string{
		"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
		"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION", "AWS_ROLE_ARN",
		"AWS_ROLE_SESSION_NAME", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
		"AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
		"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS", "AWS_MAX_ATTEMPTS", "AWS_RETRY_MODE", "AWS_USE_FIPS_ENDPOINT",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_SDK_LOAD_CONFIG",
	} {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(dir, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(dir, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

func staticAWSEnv(t *testing.T) {
	t.Helper()
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", iamKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", iamSecretKey)
	t.Setenv("AWS_SESSION_TOKEN", iamSessionToken)
	t.Setenv("AWS_REGION", "us-east-1")
}

// iamSettings are a client's settings as the aws-msk-iam-auth README has Java users write them, with
// the JAAS options given.
func iamSettings(options string) map[string]string {
	return map[string]string{
		"security.protocol":                  "SASL_SSL",
		"sasl.mechanism":                     "AWS_MSK_IAM",
		"sasl.jaas.config":                   iamLoginModule + " required" + options + ";",
		"sasl.client.callback.handler.class": iamCallbackHandler,
	}
}

// newIAM parses settings into the AWS_MSK_IAM mechanism with the test's signing time.
func newIAM(t *testing.T, settings map[string]string) (*mskIAM, ClientSecurity) {
	t.Helper()
	sec, err := ParseClientSecurity(settings)
	if err != nil {
		t.Fatalf("ParseClientSecurity: %v", err)
	}
	m, ok := sec.SASL.(*mskIAM)
	if !ok {
		t.Fatalf("the mechanism is %T, want AWS_MSK_IAM's", sec.SASL)
	}
	m.now = func() time.Time { return iamSigningTime }
	return m, sec
}

// startIAM runs Start for a connection to host and returns the payload's fields.
func startIAM(t *testing.T, m *mskIAM, host string) (sasl.StateMachine, map[string]string, error) {
	t.Helper()
	ctx := sasl.WithMetadata(t.Context(), &sasl.Metadata{Host: host, Port: 9098})
	sm, ir, err := m.Start(ctx)
	if err != nil {
		return nil, nil, err
	}
	var fields map[string]string
	if err := json.Unmarshal(ir, &fields); err != nil {
		t.Fatalf("the client message is not a JSON object of strings: %v: %s", err, ir)
	}
	return sm, fields, nil
}

// verifySigV4 recomputes the signature of a payload as a broker does, from its fields alone: SigV4's
// canonical request of the presigned GET https://<host>/?Action=kafka-cluster:Connect&X-Amz-…, its
// string to sign, and the HMAC chain of the secret key over the credential scope.
func verifySigV4(t *testing.T, p map[string]string, secretKey string) {
	t.Helper()
	names := map[string]string{
		"action": "Action", "x-amz-algorithm": "X-Amz-Algorithm", "x-amz-credential": "X-Amz-Credential",
		"x-amz-date": "X-Amz-Date", "x-amz-expires": "X-Amz-Expires", "x-amz-security-token": "X-Amz-Security-Token",
		"x-amz-signedheaders": "X-Amz-SignedHeaders",
	}
	escape := func(s string) string { return strings.ReplaceAll(url.QueryEscape(s), "+", "%20") }
	var query []string
	for field, name := range names {
		if v, ok := p[field]; ok {
			query = append(query, escape(name)+"="+escape(v))
		}
	}
	sort.Strings(query)
	emptyHash := sha256.Sum256(nil)
	canonical := strings.Join([]string{"GET", "/", strings.Join(query, "&"), "host:" + p["host"], "", "host", hex.EncodeToString(emptyHash[:])}, "\n")
	_, scope, _ := strings.Cut(p["x-amz-credential"], "/")
	canonicalHash := sha256.Sum256([]byte(canonical))
	toSign := "AWS4-HMAC-SHA256\n" + p["x-amz-date"] + "\n" + scope + "\n" + hex.EncodeToString(canonicalHash[:])
	mac := func(key []byte, data string) []byte {
		h := hmac.New(sha256.New, key)
		h.Write([]byte(data))
		return h.Sum(nil)
	}
	key := []byte("AWS4" + secretKey)
	for _, part := range strings.Split(scope, "/") {
		key = mac(key, part)
	}
	if want := hex.EncodeToString(mac(key, toSign)); p["x-amz-signature"] != want {
		t.Errorf("x-amz-signature %s does not verify: want %s over\n%s", p["x-amz-signature"], want, canonical)
	}
}

// The client message of a Java user's settings with static credentials in the environment: the
// payload's fields are MSK's, the region is the broker host's (not AWS_REGION's), the session token is
// in it, and the signature verifies.
func TestMSKIAMPayload(t *testing.T) {
	staticAWSEnv(t)
	m, sec := newIAM(t, iamSettings(""))
	if sec.Protocol != SASLSSL || sec.TLS == nil || sec.SASL.Name() != "AWS_MSK_IAM" {
		t.Fatalf("got %s, want SASL_SSL with AWS_MSK_IAM", sec)
	}
	if got := sec.String(); got != "SASL_SSL (SASL/AWS_MSK_IAM with the default AWS credentials chain)" {
		t.Errorf("String: %s", got)
	}
	_, p, err := startIAM(t, m, mskHost)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"version":              "2020_10_22",
		"host":                 mskHost,
		"action":               "kafka-cluster:Connect",
		"x-amz-algorithm":      "AWS4-HMAC-SHA256",
		"x-amz-credential":     iamKeyID + "/20201022/eu-west-1/kafka-cluster/aws4_request",
		"x-amz-date":           "20201022T123456Z",
		"x-amz-expires":        "900",
		"x-amz-security-token": iamSessionToken,
		"x-amz-signedheaders":  "host",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s: got %q, want %q", k, p[k], v)
		}
	}
	if !strings.HasPrefix(p["user-agent"], "cdcd/") {
		t.Errorf("user-agent: got %q, want cdcd's", p["user-agent"])
	}
	extra := slices.DeleteFunc(slices.Sorted(maps.Keys(p)), func(k string) bool {
		_, ok := want[k]
		return ok || k == "user-agent" || k == "x-amz-signature"
	})
	if len(extra) > 0 {
		t.Errorf("fields beyond MSK's: %v", extra)
	}
	verifySigV4(t, p, iamSecretKey)

	// A broker whose host names no region (a private DNS name, an IP) is signed for the SDK's region.
	_, p, err = startIAM(t, m, "kafka-1.internal.example")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(p["x-amz-credential"], "/us-east-1/kafka-cluster/") || p["host"] != "kafka-1.internal.example" {
		t.Errorf("without a region in the host: credential %q, host %q; want AWS_REGION's us-east-1", p["x-amz-credential"], p["host"])
	}
	verifySigV4(t, p, iamSecretKey)

	// Without metadata (kafka-go always passes it) or any region, Start says what is missing.
	if _, _, err := m.Start(t.Context()); err == nil || !strings.Contains(err.Error(), "host is not known") {
		t.Errorf("without sasl.Metadata: got %v", err)
	}
	t.Setenv("AWS_REGION", "")
	m, _ = newIAM(t, iamSettings(""))
	if _, _, err := startIAM(t, m, "10.0.0.7"); err == nil || !strings.Contains(err.Error(), "set AWS_REGION") {
		t.Errorf("without a region: got %v, want one asking for AWS_REGION", err)
	}
}

func TestMSKRegion(t *testing.T) {
	for host, want := range map[string]string{
		mskHost: "eu-west-1",
		"b-2.prod-cluster-1.x9y8z7.c11.kafka.us-gov-west-1.amazonaws.com": "us-gov-west-1",
		"boot-abcd1234.c3.kafka-serverless.ap-southeast-2.amazonaws.com":  "ap-southeast-2",
		"b-1.c.abc.c2.kafka.cn-north-1.amazonaws.com.cn":                  "cn-north-1",
		"B-1.DEMO.ABC.C2.KAFKA.EU-CENTRAL-1.AMAZONAWS.COM.":               "eu-central-1",
		"b-1-public.my-cluster-2.abc.c2.kafka.eu-west-3.amazonaws.com":    "eu-west-3",
		"kafka.eu-west-1.example.com":                                     "",
		"127.0.0.1":                                                       "",
		"amazonaws.com":                                                   "",
		"b-1.demo.abc.c2.kafka.not_a_region.amazonaws.com":                "",
		"vpce-0123-abcd.vpce-svc-0123.eu-west-1.vpce.amazonaws.com":       "",
		"b-1.demo.abc.c2.kafka.eusc-de-east-1.amazonaws.eu":               "eusc-de-east-1",
	} {
		if got := mskRegion(host); got != want {
			t.Errorf("mskRegion(%q) = %q, want %q", host, got, want)
		}
	}
}

// awsProfileName picks a profile of the shared files, which wins over credentials in the
// environment (the Java library tries it first); its region stands in for a host without one. A profile
// in neither file is refused at once.
func TestMSKIAMProfile(t *testing.T) {
	staticAWSEnv(t)
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", writeFile(t, "config", "[default]\nregion = us-west-2\n\n[profile msk]\nregion = ap-southeast-2\n"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", writeFile(t, "credentials", "[msk]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-"+iamSecretKey+"\n"))
	m, sec := newIAM(t, iamSettings(` awsProfileName="msk"`))
	if !strings.Contains(sec.String(), `the AWS profile "msk"`) {
		t.Errorf("String: %s", sec)
	}
	for host, region := range map[string]string{mskHost: "eu-west-1", "broker.internal": "ap-southeast-2"} {
		_, p, err := startIAM(t, m, host)
		if err != nil {
			t.Fatal(err)
		}
		if want := "AKIDPROFILE/20201022/" + region + "/kafka-cluster/aws4_request"; p["x-amz-credential"] != want {
			t.Errorf("%s: credential %q, want %q (the profile's key)", host, p["x-amz-credential"], want)
		}
		if _, ok := p["x-amz-security-token"]; ok {
			t.Errorf("%s: the environment's session token is in the payload of the profile's key", host)
		}
		verifySigV4(t, p, "profile-"+iamSecretKey)
	}

	_, err := ParseClientSecurity(iamSettings(` awsProfileName="nope"`))
	if err == nil || !strings.Contains(err.Error(), `sasl.jaas.config: option awsProfileName: the profile "nope" is in neither`) {
		t.Errorf("a missing profile: got %v", err)
	}
}

// stsStub is an STS endpoint for AssumeRole (AWS_ENDPOINT_URL_STS points the SDK at it): it answers
// the first failFirst calls with a 500, then with the role's credentials, and records each call.
type stsStub struct {
	mu        sync.Mutex
	calls     []url.Values
	auth      []string
	failFirst int
	status    int // of the failures; 500 by default
}

func newSTSStub(t *testing.T, s *stsStub) *stsStub {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.calls = append(s.calls, r.PostForm)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		n := len(s.calls)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/xml")
		if n <= s.failFirst {
			status := s.status
			if status == 0 {
				status = http.StatusInternalServerError
			}
			w.WriteHeader(status)
			fmt.Fprint(w, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>not allowed</Message></Error><RequestId>r-1</RequestId></ErrorResponse>`)
			return
		}
		fmt.Fprint(w, `<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult>
<Credentials><AccessKeyId>ASIAROLE</AccessKeyId><SecretAccessKey>role-`+iamSecretKey+`</SecretAccessKey>
<SessionToken>role-`+iamSessionToken+`</SessionToken><Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>
<AssumedRoleUser><Arn>arn:aws:sts::123456789012:assumed-role/msk/s</Arn><AssumedRoleId>AROA:s</AssumedRoleId></AssumedRoleUser>
</AssumeRoleResult><ResponseMetadata><RequestId>r-2</RequestId></ResponseMetadata></AssumeRoleResponse>`)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("AWS_ENDPOINT_URL_STS", srv.URL)
	return s
}

func (s *stsStub) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// awsRoleArn assumes the role with the session name, external id and STS region given, signing the
// STS call with the role's own static keys when given; the role's credentials then sign the payload.
// awsMaxRetries bounds the retries of a failing STS call.
func TestMSKIAMRole(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/msk"
	t.Run("assume", func(t *testing.T) {
		staticAWSEnv(t)
		stub := newSTSStub(t, &stsStub{})
		m, sec := newIAM(t, iamSettings(` awsRoleArn="`+role+`" awsRoleSessionName="cdcd-task" awsRoleExternalId="ext-1" awsStsRegion="eu-central-1"`+
			` awsRoleAccessKeyId="AKIDBASE" awsRoleSecretAccessKey="base-`+iamSecretKey+`"`))
		if !strings.Contains(sec.String(), "the role "+role) {
			t.Errorf("String: %s", sec)
		}
		for range 2 {
			_, p, err := startIAM(t, m, mskHost)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(p["x-amz-credential"], "ASIAROLE/") || p["x-amz-security-token"] != "role-"+iamSessionToken {
				t.Errorf("signed with %q, token %q; want the role's", p["x-amz-credential"], p["x-amz-security-token"])
			}
			verifySigV4(t, p, "role-"+iamSecretKey)
		}
		if stub.count() != 1 {
			t.Fatalf("%d AssumeRole calls, want 1 (the role's credentials are cached until they expire)", stub.count())
		}
		call := stub.calls[0]
		for k, v := range map[string]string{"Action": "AssumeRole", "RoleArn": role, "RoleSessionName": "cdcd-task", "ExternalId": "ext-1"} {
			if call.Get(k) != v {
				t.Errorf("AssumeRole %s: got %q, want %q", k, call.Get(k), v)
			}
		}
		if !strings.Contains(stub.auth[0], "Credential=AKIDBASE/") || !strings.Contains(stub.auth[0], "/eu-central-1/sts/aws4_request") {
			t.Errorf("the STS call is signed %q; want awsRoleAccessKeyId's key in awsStsRegion", stub.auth[0])
		}
	})

	t.Run("defaults", func(t *testing.T) {
		staticAWSEnv(t)
		stub := newSTSStub(t, &stsStub{})
		m, _ := newIAM(t, iamSettings(` awsRoleArn="`+role+`"`))
		if _, _, err := startIAM(t, m, mskHost); err != nil {
			t.Fatal(err)
		}
		if got := stub.calls[0].Get("RoleSessionName"); got != "aws-msk-iam-auth" {
			t.Errorf("RoleSessionName %q, want the Java library's aws-msk-iam-auth", got)
		}
		// The STS call is signed with the default chain's key, for the Java library's STS region
		// aws-global (which, without AWS_ENDPOINT_URL_STS, the SDK maps to the global endpoint).
		if !strings.Contains(stub.auth[0], "Credential="+iamKeyID+"/") || !strings.Contains(stub.auth[0], "/aws-global/sts/aws4_request") {
			t.Errorf("the STS call is signed %q; want the environment's key for aws-global", stub.auth[0])
		}
	})

	t.Run("retries", func(t *testing.T) {
		staticAWSEnv(t)
		stub := newSTSStub(t, &stsStub{failFirst: 2})
		m, _ := newIAM(t, iamSettings(` awsRoleArn="`+role+`" awsMaxRetries="2" awsMaxBackOffTimeMs="1" awsAddDefaultProviders=false`))
		if _, p, err := startIAM(t, m, mskHost); err != nil || !strings.HasPrefix(p["x-amz-credential"], "ASIAROLE/") {
			t.Fatalf("after two failures and two retries: %v, %v", p, err)
		}
		if stub.count() != 3 {
			t.Errorf("%d STS calls, want 3", stub.count())
		}

		stub = newSTSStub(t, &stsStub{failFirst: 1})
		m, _ = newIAM(t, iamSettings(` awsRoleArn="`+role+`" awsMaxRetries="0" awsAddDefaultProviders=false`))
		_, _, err := startIAM(t, m, mskHost)
		if err == nil || !strings.Contains(err.Error(), "the role "+role+" (awsRoleArn): ") || strings.Contains(err.Error(), defaultChain) {
			t.Errorf("awsMaxRetries=0 with a failing STS, no default chain: got %v", err)
		}
		if stub.count() != 1 {
			t.Errorf("%d STS calls, want 1", stub.count())
		}
	})

	// A refused role falls through to the default chain, as in the Java library; when that fails too,
	// the error names both, and carries none of the secrets given.
	t.Run("fallthrough", func(t *testing.T) {
		staticAWSEnv(t)
		newSTSStub(t, &stsStub{failFirst: 100, status: http.StatusForbidden})
		m, _ := newIAM(t, iamSettings(` awsRoleArn="`+role+`"`))
		if _, p, err := startIAM(t, m, mskHost); err != nil || !strings.HasPrefix(p["x-amz-credential"], iamKeyID+"/") {
			t.Errorf("a refused role: got %v, %v; want the environment's key", p, err)
		}

		isolateAWS(t)
		newSTSStub(t, &stsStub{failFirst: 100, status: http.StatusForbidden})
		m, _ = newIAM(t, iamSettings(` awsRoleArn="`+role+`" awsRoleAccessKeyId="AKIDBASE" awsRoleSecretAccessKey="`+iamSecretKey+`" awsRoleSessionToken="`+iamSessionToken+`"`))
		_, _, err := startIAM(t, m, mskHost)
		if err == nil || !strings.Contains(err.Error(), "AccessDenied") || !strings.Contains(err.Error(), defaultChain) {
			t.Errorf("a refused role without a default chain: got %v", err)
		}
		noAWSSecret(t, err)
	})
}

// noAWSSecret fails the test when err carries a secret key or session token of the tests.
func noAWSSecret(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	for _, s := range []string{iamSecretKey, iamSessionToken} {
		if strings.Contains(err.Error(), s) {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
}

// Without credentials anywhere the error names AWS_MSK_IAM and the chain tried; it comes at once with
// the instance metadata off, and within the mechanism's bound when a provider does not answer.
func TestMSKIAMNoCredentials(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_SECRET_ACCESS_KEY", iamSecretKey) // without its key id, the environment has no credentials
	m, _ := newIAM(t, iamSettings(""))
	_, _, err := startIAM(t, m, mskHost)
	for _, want := range []string{"SASL/AWS_MSK_IAM", "found no AWS credentials", "environment variables AWS_ACCESS_KEY_ID", "shared config and credentials files", "web identity", "EC2 instance metadata"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
	noAWSSecret(t, err)

	m.providers = []namedProvider{{"a provider that does not answer", aws.CredentialsProviderFunc(func(ctx context.Context) (aws.Credentials, error) {
		<-ctx.Done()
		return aws.Credentials{}, ctx.Err()
	})}}
	m.timeout = 50 * time.Millisecond
	if _, _, err := startIAM(t, m, mskHost); err == nil || !strings.Contains(err.Error(), "no answer within 50ms") {
		t.Errorf("a provider that hangs: got %v, want the bound", err)
	}
}

// The options and classes cdcd does not implement are refused by name, before anything is contacted,
// and no refusal carries a secret.
func TestMSKIAMRefusals(t *testing.T) {
	staticAWSEnv(t)
	with := func(extra map[string]string) map[string]string {
		s := iamSettings("")
		for k, v := range extra {
			if v == "" {
				delete(s, k)
			} else {
				s[k] = v
			}
		}
		return s
	}
	role := ` awsRoleArn="arn:aws:iam::1:role/r"`
	tests := []struct {
		settings  map[string]string
		key, want string
	}{
		{iamSettings(` awsDebugCreds=true`), "sasl.jaas.config", "option awsDebugCreds: cdcd does not log the caller identity"},
		{iamSettings(` awsShouldUseFips=true`), "sasl.jaas.config", "option awsShouldUseFips: cdcd does not implement it; set AWS_USE_FIPS_ENDPOINT=true"},
		{iamSettings(` awsMskRegionProvider="com.example.Regions"`), "sasl.jaas.config", "option awsMskRegionProvider: region providers are Java classes"},
		{iamSettings(` awsProfile="p"`), "sasl.jaas.config", "option awsProfile is not one software.amazon.msk.auth.iam.IAMLoginModule takes"},
		{iamSettings(` awsDebugCreds=yes`), "sasl.jaas.config", `option awsDebugCreds: "yes" must be true or false`},
		{iamSettings(role + ` awsMaxRetries="-1"`), "sasl.jaas.config", "option awsMaxRetries"},
		{iamSettings(` awsRoleArn="role/r"`), "sasl.jaas.config", "option awsRoleArn: \"role/r\" is not a role ARN"},
		{iamSettings(role + ` awsRoleSessionName="a b"`), "sasl.jaas.config", "option awsRoleSessionName"},
		{iamSettings(` awsRoleSessionName="s"`), "sasl.jaas.config", "option awsRoleSessionName is set without awsRoleArn"},
		{iamSettings(` awsStsRegion="eu-west-1"`), "sasl.jaas.config", "option awsStsRegion is set without awsRoleArn"},
		{iamSettings(` awsRoleSecretAccessKey="` + iamSecretKey + `"`), "sasl.jaas.config", "option awsRoleSecretAccessKey is set without awsRoleArn"},
		{iamSettings(role + ` awsRoleSecretAccessKey="` + iamSecretKey + `"`), "sasl.jaas.config", "awsRoleAccessKeyId and awsRoleSecretAccessKey go together"},
		{iamSettings(role + ` awsRoleSessionToken="` + iamSessionToken + `"`), "sasl.jaas.config", "option awsRoleSessionToken needs awsRoleAccessKeyId"},
		{iamSettings(` awsAddDefaultProviders=false`), "sasl.jaas.config", "leaves no way to find credentials"},
		{with(map[string]string{"sasl.jaas.config": plainLoginModule + ` required username="u" password="` + iamSecretKey + `";`}), "sasl.jaas.config", "needs software.amazon.msk.auth.iam.IAMLoginModule"},
		{with(map[string]string{"sasl.jaas.config": ""}), "sasl.jaas.config", "is not set; SASL/AWS_MSK_IAM needs it as Kafka does: software.amazon.msk.auth.iam.IAMLoginModule required;"},
		{with(map[string]string{"sasl.client.callback.handler.class": "com.example.Handler"}), "sasl.client.callback.handler.class", "com.example.Handler is not supported: SASL callback handlers are Java classes"},
		{with(map[string]string{"sasl.client.callback.handler.class": "software.amazon.msk.auth.iam.STSAssumeRoleIAMClientCallbackHandler"}), "sasl.client.callback.handler.class", "cdcd implements software.amazon.msk.auth.iam.IAMClientCallbackHandler"},
		{with(map[string]string{"sasl.login.callback.handler.class": oidcLoginHandlers[0]}), "sasl.login.callback.handler.class", "does not log in for sasl.mechanism=AWS_MSK_IAM"},
		{with(map[string]string{"sasl.login.callback.handler.class": "software.amazon.msk.auth.iam.IAMOAuthBearerLoginCallbackHandler"}), "sasl.login.callback.handler.class", "not supported"},
		{with(map[string]string{"sasl.mechanism": "SCRAM-SHA-512", "sasl.jaas.config": jaas(scramLoginModule, "u", iamSecretKey)}), "sasl.client.callback.handler.class", "signs for sasl.mechanism=AWS_MSK_IAM only, not SCRAM-SHA-512"},
		{with(map[string]string{"security.protocol": "SSL"}), "sasl.mechanism", "security.protocol=SSL does not authenticate with SASL"},
	}
	for _, tt := range tests {
		_, err := ParseClientSecurity(tt.settings)
		var se *SettingError
		switch {
		case err == nil || !strings.Contains(err.Error(), tt.want):
			t.Errorf("%v: got %v, want an error with %q", tt.settings, err, tt.want)
		case !errors.As(err, &se) || !strings.Contains(err.Error(), tt.key+":"):
			t.Errorf("%v: got %v, want a *SettingError naming %s", tt.settings, err, tt.key)
		}
		noAWSSecret(t, err)
	}

	// What the Java library takes and cdcd honours (or, for the two debugging switches, their "off").
	for _, options := range []string{
		` awsDebugCreds=false awsShouldUseFips=false awsAddDefaultProviders=true`,
		role + ` awsRoleSessionName="cdcd@task-1" awsStsRegion="us-east-1" awsMaxRetries="3" awsMaxBackOffTimeMs="5000" awsAddDefaultProviders=false`,
	} {
		if _, err := ParseClientSecurity(iamSettings(options)); err != nil {
			t.Errorf("%s: %v", options, err)
		}
	}
	// The callback handler may be left out: it is what cdcd does anyway.
	if _, err := ParseClientSecurity(with(map[string]string{"sasl.client.callback.handler.class": ""})); err != nil {
		t.Errorf("without the callback handler: %v", err)
	}
}

// The exchange after the client message: MSK's non-empty JSON answer completes it, as in the Java
// library; an empty or non-JSON answer fails it, and nothing may follow completion.
func TestMSKIAMStateMachine(t *testing.T) {
	staticAWSEnv(t)
	m, _ := newIAM(t, iamSettings(""))
	start := func() sasl.StateMachine {
		sm, _, err := startIAM(t, m, mskHost)
		if err != nil {
			t.Fatal(err)
		}
		return sm
	}
	sm := start()
	done, resp, err := sm.Next(t.Context(), []byte(`{"version":"2020_10_22","request-id":"f0e1d2c3"}`))
	if !done || resp != nil || err != nil {
		t.Fatalf("MSK's answer: got done=%v resp=%q err=%v, want done", done, resp, err)
	}
	if done, _, err := sm.Next(t.Context(), []byte(`{}`)); done || err == nil {
		t.Errorf("after completion: got done=%v err=%v, want an error", done, err)
	}
	for _, answer := range []string{"", "not json", "null"} {
		done, _, err := start().Next(t.Context(), []byte(answer))
		if done || !errors.Is(err, kafkago.SASLAuthenticationFailed) {
			t.Errorf("answer %q: got done=%v err=%v, want a failed authentication", answer, done, err)
		}
	}
}

// Through kafka-go against an in-process broker that takes AWS_MSK_IAM (its handshake and
// authentication answered as MSK does): the producer and a durable log authenticate, each connection's
// message names the broker it dials, and a refusal is explained in IAM's terms.
func TestMSKIAMThroughKafkaGo(t *testing.T) {
	staticAWSEnv(t)
	t.Setenv("AWS_REGION", "eu-west-1")
	f := newSecureFixture(t)
	var (
		mu       sync.Mutex
		payloads []map[string]string
		refuse   atomic.Bool
	)
	f.cluster.ControlKey(int16(kmsg.SASLHandshake), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.cluster.KeepControl()
		r := req.(*kmsg.SASLHandshakeRequest)
		resp := r.ResponseKind().(*kmsg.SASLHandshakeResponse)
		resp.SupportedMechanisms = []string{"AWS_MSK_IAM"}
		if r.Mechanism != "AWS_MSK_IAM" {
			resp.ErrorCode = kerr.UnsupportedSaslMechanism.Code
		}
		return resp, nil, true
	})
	f.cluster.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		f.cluster.KeepControl()
		r := req.(*kmsg.SASLAuthenticateRequest)
		resp := r.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		var p map[string]string
		if err := json.Unmarshal(r.SASLAuthBytes, &p); err != nil || refuse.Load() {
			resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
			resp.ErrorMessage = kmsg.StringPtr("[r-9]: Access denied")
			return resp, nil, true
		}
		mu.Lock()
		payloads = append(payloads, p)
		mu.Unlock()
		resp.SASLAuthBytes = []byte(`{"version":"2020_10_22","request-id":"r-1"}`)
		return resp, nil, true
	})
	settings := iamSettings("")
	settings["security.protocol"] = "SASL_PLAINTEXT" // the fake broker does not speak TLS
	if err := f.produceOne(t, settings); err != nil {
		t.Fatalf("producing: %v", err)
	}
	if err := f.roundTripLog(t, settings); err != nil {
		t.Fatalf("durable log: %v", err)
	}
	mu.Lock()
	if len(payloads) == 0 {
		t.Fatal("no client authenticated")
	}
	for _, p := range payloads {
		if p["host"] != "127.0.0.1" || p["action"] != "kafka-cluster:Connect" || !strings.Contains(p["x-amz-credential"], "/eu-west-1/kafka-cluster/") {
			t.Errorf("payload %v: want host 127.0.0.1 (the broker dialled), signed for AWS_REGION", p)
		}
		if _, err := time.Parse("20060102T150405Z", p["x-amz-date"]); err != nil {
			t.Errorf("x-amz-date %q: %v", p["x-amz-date"], err)
		}
		verifySigV4(t, p, iamSecretKey)
	}
	mu.Unlock()

	refuse.Store(true)
	err := f.produceOne(t, settings)
	if !errors.Is(err, kafkago.SASLAuthenticationFailed) || !errors.Is(err, ErrSecurity) ||
		!strings.Contains(err.Error(), "SASL/AWS_MSK_IAM with the default AWS credentials chain: authentication failed (the broker refused the signed request: the IAM identity needs kafka-cluster:Connect") {
		t.Errorf("refused: got %v", err)
	}
	noAWSSecret(t, err)
	f.noSecret(t, err)
	for _, s := range []string{iamSecretKey, iamSessionToken} {
		if strings.Contains(f.logs.String(), s) {
			t.Errorf("the logs show a secret:\n%s", f.logs.String())
		}
	}
}
