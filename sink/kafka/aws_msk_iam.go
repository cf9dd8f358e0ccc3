package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/credentials/stscreds"
	"github.com/aws/aws-sdk-go-v2/service/sts"
	kafkago "github.com/segmentio/kafka-go"
	"github.com/segmentio/kafka-go/sasl"
)

// This file is SASL/AWS_MSK_IAM, Amazon MSK's IAM access control, as the aws-msk-iam-auth library does it
// for Java clients (sasl.jaas.config=software.amazon.msk.auth.iam.IAMLoginModule required; with
// sasl.client.callback.handler.class=software.amazon.msk.auth.iam.IAMClientCallbackHandler). The client's
// one message is a JSON object of the query parameters of a SigV4-presigned request for the action
// kafka-cluster:Connect on the broker's host (service kafka-cluster, the region of the broker's host
// name), and the broker answers a success with a non-empty JSON object (its request id).
//
// Credentials are found as the Java library finds them: the profile of awsProfileName, then the role of
// awsRoleArn, then the AWS SDK's default chain (environment variables, the shared config and credentials
// files, web identity, ECS container credentials, EC2 instance metadata); the first that yields
// credentials signs. Nothing is contacted when the settings are parsed: credentials are fetched (and
// cached by the SDK until they expire) when a connection authenticates.

// The names aws-msk-iam-auth gives its login module and callback handler.
const (
	iamLoginModule     = "software.amazon.msk.auth.iam.IAMLoginModule"
	iamCallbackHandler = "software.amazon.msk.auth.iam.IAMClientCallbackHandler"
)

const (
	iamPayloadVersion  = "2020_10_22"
	iamAction          = "kafka-cluster:Connect"
	iamSigningService  = "kafka-cluster"
	iamPresignExpiry   = 15 * time.Minute // the Java library's
	iamDefaultSession  = "aws-msk-iam-auth"
	iamDefaultSTS      = "aws-global" // the Java library's STS region: the global endpoint
	iamRetrieveTimeout = 30 * time.Second
	// emptyPayloadHash is the SHA-256 of the empty body of the presigned GET.
	emptyPayloadHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// iamUserAgent goes in the payload's user-agent; MSK only records it.
var iamUserAgent = "cdcd/aws-sdk-go-v2/" + aws.SDKVersion + "/" + runtime.Version()

// iamOptions are the IAMLoginModule options cdcd honours, for messages.
var iamOptions = []string{
	"awsProfileName", "awsRoleArn", "awsRoleSessionName", "awsRoleExternalId", "awsRoleAccessKeyId",
	"awsRoleSecretAccessKey", "awsRoleSessionToken", "awsStsRegion", "awsAddDefaultProviders",
	"awsMaxRetries", "awsMaxBackOffTimeMs", "awsDebugCreds=false", "awsShouldUseFips=false",
}

// defaultChain describes the AWS SDK's default credentials chain in errors.
const defaultChain = "the default AWS credentials chain (environment variables AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, " +
	"the shared config and credentials files and AWS_PROFILE, web identity, ECS container credentials, EC2 instance metadata)"

// namedProvider is one link of the credentials chain and what to call it in errors.
type namedProvider struct {
	name string
	aws.CredentialsProvider
}

// mskIAM is the AWS_MSK_IAM sasl.Mechanism. It is safe for concurrent use: every connection of a
// transport shares its providers and their credential caches.
type mskIAM struct {
	providers []namedProvider // tried in order; the first that yields credentials signs
	region    string          // the SDK's region, for a broker host that names none
	desc      string          // for who()
	signer    *v4.Signer
	now       func() time.Time
	timeout   time.Duration // bounds the credential fetch of one authentication
}

var _ sasl.Mechanism = (*mskIAM)(nil)

// iamSessionName is STS's RoleSessionName.
var iamSessionName = regexp.MustCompile(`^[\w+=,.@-]{2,64}$`)

// newMSKIAM builds the mechanism from the client's settings and its JAAS options. It reads the AWS
// SDK's configuration (environment, shared files) but contacts nothing. Errors name options, never
// their values when they may be secrets.
func newMSKIAM(settings, options map[string]string) (*mskIAM, error) {
	var errs []error
	fail := func(format string, args ...any) { errs = append(errs, settingErr(jaasConfigKey, format, args...)) }
	if v := strings.TrimSpace(settings["sasl.login.callback.handler.class"]); v != "" {
		// Kafka would hand the login handler the mechanism AWS_MSK_IAM, which Kafka's OIDC handler refuses.
		errs = append(errs, settingErr("sasl.login.callback.handler.class", "%s does not log in for sasl.mechanism=AWS_MSK_IAM; remove it (IAMLoginModule needs no login handler)", v))
	}

	var (
		profile, roleARN, externalID, stsRegion string
		keyID, secretKey, sessionToken          string
		sessionName                             = iamDefaultSession
		addDefault                              = true
		maxRetries, maxBackoff                  = -1, -1
		roleOnly                                []string // options that mean something only with awsRoleArn
	)
	boolean := func(o, v string) bool {
		switch strings.ToLower(v) {
		case "true":
			return true
		case "false":
			return false
		}
		fail("option %s: %q must be true or false", o, v)
		return false
	}
	count := func(o, v string) int {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			fail("option %s: %q must be a whole number from 0", o, v)
			return -1
		}
		return n
	}
	for _, o := range slices.Sorted(maps.Keys(options)) {
		v := strings.TrimSpace(options[o])
		switch o {
		case "awsProfileName":
			profile = v
		case "awsRoleArn":
			if !strings.HasPrefix(v, "arn:") {
				fail("option awsRoleArn: %q is not a role ARN (arn:aws:iam::<account>:role/<name>)", v)
			}
			roleARN = v
		case "awsRoleSessionName":
			if !iamSessionName.MatchString(v) {
				fail("option awsRoleSessionName: %q is not a role session name (2 to 64 of letters, digits and +=,.@_-)", v)
			}
			sessionName = v
			roleOnly = append(roleOnly, o)
		case "awsRoleExternalId":
			externalID = v
			roleOnly = append(roleOnly, o)
		case "awsRoleAccessKeyId":
			keyID = v
			roleOnly = append(roleOnly, o)
		case "awsRoleSecretAccessKey":
			secretKey = options[o]
			roleOnly = append(roleOnly, o)
		case "awsRoleSessionToken":
			sessionToken = options[o]
			roleOnly = append(roleOnly, o)
		case "awsStsRegion":
			stsRegion = v
			roleOnly = append(roleOnly, o)
		case "awsAddDefaultProviders":
			addDefault = boolean(o, v)
		case "awsMaxRetries":
			maxRetries = count(o, v)
		case "awsMaxBackOffTimeMs":
			maxBackoff = count(o, v)
		case "awsDebugCreds":
			if boolean(o, v) {
				fail("option awsDebugCreds: cdcd does not log the caller identity of the credentials; run `aws sts get-caller-identity` in cdcd's environment instead, or remove it")
			}
		case "awsShouldUseFips":
			if boolean(o, v) {
				fail("option awsShouldUseFips: cdcd does not implement it; set AWS_USE_FIPS_ENDPOINT=true in cdcd's environment, which the AWS SDK honours for every endpoint, and remove the option")
			}
		case "awsMskRegionProvider":
			fail("option awsMskRegionProvider: region providers are Java classes, which cdcd cannot run; cdcd takes the region from the broker's host name, else from the AWS SDK (AWS_REGION, the profile's region)")
		default:
			fail("option %s is not one %s takes (%s)", o, iamLoginModule, strings.Join(iamOptions, ", "))
		}
	}
	if roleARN == "" {
		for _, o := range roleOnly {
			fail("option %s is set without awsRoleArn, which it belongs to; set awsRoleArn or remove it", o)
		}
	}
	if (keyID == "") != (secretKey == "") {
		fail("options awsRoleAccessKeyId and awsRoleSecretAccessKey go together; set both or neither")
	}
	if sessionToken != "" && keyID == "" {
		fail("option awsRoleSessionToken needs awsRoleAccessKeyId and awsRoleSecretAccessKey")
	}
	if !addDefault && profile == "" && roleARN == "" {
		fail("option awsAddDefaultProviders=false leaves no way to find credentials; set awsProfileName or awsRoleArn, or remove it")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	// The Java library retries a failed credential load awsMaxRetries times (3) with a jittered backoff
	// of at most awsMaxBackOffTimeMs (5000); here they bound the retries of the SDK's own calls that
	// fetch credentials (STS, instance metadata, SSO). Unset, the SDK's defaults stand.
	var load []func(*config.LoadOptions) error
	if maxRetries >= 0 || maxBackoff >= 0 {
		load = append(load, config.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(o *retry.StandardOptions) {
				if maxRetries >= 0 {
					o.MaxAttempts = maxRetries + 1
				}
				if maxBackoff >= 0 {
					o.MaxBackoff = time.Duration(maxBackoff) * time.Millisecond
				}
			})
		}))
	}
	ctx := context.Background()
	base, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, settingErr(saslMechanismKey, "AWS_MSK_IAM: reading the AWS SDK's configuration (environment and shared files): %v", err)
	}

	m := &mskIAM{region: base.Region, signer: v4.NewSigner(), now: time.Now, timeout: iamRetrieveTimeout}
	var desc []string
	if profile != "" {
		pcfg, err := config.LoadDefaultConfig(ctx, append(load, config.WithSharedConfigProfile(profile))...)
		var missing config.SharedConfigProfileNotExistError
		switch {
		case errors.As(err, &missing):
			return nil, settingErr(jaasConfigKey, "option awsProfileName: the profile %q is in neither the shared config file nor the credentials file (AWS_CONFIG_FILE, AWS_SHARED_CREDENTIALS_FILE; ~/.aws/config and ~/.aws/credentials by default)", profile)
		case err != nil:
			return nil, settingErr(jaasConfigKey, "option awsProfileName: reading the profile %q: %v", profile, err)
		}
		m.providers = append(m.providers, namedProvider{fmt.Sprintf("the profile %q (awsProfileName)", profile), pcfg.Credentials})
		if pcfg.Region != "" {
			m.region = pcfg.Region
		}
		desc = append(desc, fmt.Sprintf("the AWS profile %q", profile))
	}
	if roleARN != "" {
		if stsRegion == "" {
			stsRegion = iamDefaultSTS
		}
		client := sts.NewFromConfig(base, func(o *sts.Options) {
			o.Region = stsRegion
			if keyID != "" {
				o.Credentials = credentials.NewStaticCredentialsProvider(keyID, secretKey, sessionToken)
			}
		})
		role := stscreds.NewAssumeRoleProvider(client, roleARN, func(o *stscreds.AssumeRoleOptions) {
			o.RoleSessionName = sessionName
			if externalID != "" {
				o.ExternalID = aws.String(externalID)
			}
		})
		m.providers = append(m.providers, namedProvider{fmt.Sprintf("the role %s (awsRoleArn)", roleARN), aws.NewCredentialsCache(role)})
		desc = append(desc, "the role "+roleARN)
	}
	if addDefault {
		m.providers = append(m.providers, namedProvider{defaultChain, base.Credentials})
		if len(desc) == 0 {
			desc = append(desc, "the default AWS credentials chain")
		}
	}
	m.desc = strings.Join(desc, ", else ")
	return m, nil
}

func (m *mskIAM) Name() string { return awsMSKIAM }

func (m *mskIAM) who() string { return "SASL/AWS_MSK_IAM with " + m.desc }

// Start signs the connection's one client message for the broker kafka-go names in ctx's
// sasl.Metadata. It fetches credentials (within m.timeout) and may block that long.
func (m *mskIAM) Start(ctx context.Context) (sasl.StateMachine, []byte, error) {
	md := sasl.MetadataFromContext(ctx)
	if md == nil || md.Host == "" {
		return nil, nil, fmt.Errorf("%s: the broker's host is not known, and the signature must name it", m.who())
	}
	region := mskRegion(md.Host)
	if region == "" {
		region = m.region
	}
	if region == "" {
		return nil, nil, fmt.Errorf("%s: broker %s: its host name names no AWS region (MSK's are b-1.<cluster>.<id>.c<n>.kafka.<region>.amazonaws.com), and the AWS SDK has none; set AWS_REGION in cdcd's environment or region in the profile", m.who(), md.Host)
	}
	creds, err := m.credentials(ctx)
	if err != nil {
		return nil, nil, err
	}
	payload, err := iamPayload(ctx, m.signer, creds, md.Host, region, m.now())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: signing for broker %s: %w", m.who(), md.Host, err)
	}
	return &mskIAMSession{}, payload, nil
}

// errIAMTimeout ends a credential fetch that took longer than the mechanism's bound.
var errIAMTimeout = errors.New("the credential fetch timed out")

// credentials tries each provider in order and returns the first credentials found. It gives up after
// m.timeout, or when ctx ends.
func (m *mskIAM) credentials(ctx context.Context) (aws.Credentials, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, m.timeout, errIAMTimeout)
	defer cancel()
	var tried []string
	for _, p := range m.providers {
		creds, err := p.Retrieve(ctx)
		if err == nil && creds.HasKeys() {
			return creds, nil
		}
		if err == nil {
			err = errors.New("it returned no keys")
		}
		if errors.Is(context.Cause(ctx), errIAMTimeout) {
			err = fmt.Errorf("no answer within %s: %w", m.timeout, err)
		}
		tried = append(tried, fmt.Sprintf("%s: %v", p.name, err))
		if ctx.Err() != nil {
			break
		}
	}
	return aws.Credentials{}, fmt.Errorf("%s: found no AWS credentials; tried %s", m.who(), strings.Join(tried, "; then "))
}

// iamPayload is the client message: the presigned request's query parameters and signed headers with
// lower-case keys, and the payload's version, host, user agent and action.
func iamPayload(ctx context.Context, signer *v4.Signer, creds aws.Credentials, host, region string, at time.Time) ([]byte, error) {
	query := url.Values{"Action": {iamAction}, "X-Amz-Expires": {strconv.Itoa(int(iamPresignExpiry / time.Second))}}
	u := url.URL{Scheme: "https", Host: host, Path: "/", RawQuery: query.Encode()}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	signed, headers, err := signer.PresignHTTP(ctx, creds, req, emptyPayloadHash, iamSigningService, region, at)
	if err != nil {
		return nil, err
	}
	su, err := url.Parse(signed)
	if err != nil {
		return nil, err
	}
	fields := map[string]string{"version": iamPayloadVersion, "host": host, "user-agent": iamUserAgent}
	for k, v := range su.Query() {
		fields[strings.ToLower(k)] = v[0]
	}
	for k, v := range headers {
		fields[strings.ToLower(k)] = v[0]
	}
	return json.Marshal(fields)
}

// mskRegion is the region an MSK broker's host name names: the label before amazonaws.com(.cn), as in
// b-1.demo.abc123.c2.kafka.eu-west-1.amazonaws.com; "" for another host.
func mskRegion(host string) string {
	labels := strings.Split(strings.ToLower(strings.TrimSuffix(host, ".")), ".")
	for i := 1; i < len(labels); i++ {
		if labels[i] == "amazonaws" && awsRegionLabel.MatchString(labels[i-1]) {
			return labels[i-1]
		}
	}
	return ""
}

// awsRegionLabel matches region names: eu-west-1, us-gov-west-1, cn-north-1, eusc-de-east-1.
var awsRegionLabel = regexp.MustCompile(`^[a-z]{2,4}(-[a-z]+)+-[0-9]{1,2}$`)

// mskIAMSession is one connection's exchange: the client message (sent with Start), then the broker's
// answer. It is used by one goroutine.
type mskIAMSession struct{ done bool }

// Next takes the broker's answer to the client message: a non-empty JSON object (MSK's version and
// request id) completes the authentication, as in the Java library; an empty or other answer fails it.
// A refusal does not get here: the broker answers it with an error code, which kafka-go returns.
func (s *mskIAMSession) Next(_ context.Context, challenge []byte) (bool, []byte, error) {
	if s.done {
		return false, nil, errors.New("SASL/AWS_MSK_IAM: the broker sent more after the authentication completed")
	}
	if len(challenge) == 0 {
		return false, nil, fmt.Errorf("%w: SASL/AWS_MSK_IAM: the broker's answer is empty; MSK answers a success with its request id", kafkago.SASLAuthenticationFailed)
	}
	var answer map[string]any
	if err := json.Unmarshal(challenge, &answer); err != nil || answer == nil {
		return false, nil, fmt.Errorf("%w: SASL/AWS_MSK_IAM: the broker's answer is not a JSON object", kafkago.SASLAuthenticationFailed)
	}
	s.done = true
	return true, nil, nil
}
