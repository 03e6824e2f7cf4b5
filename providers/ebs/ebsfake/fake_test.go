package ebsfake_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"reclaim.dev/reclaim/providers/ebs/ebsfake"
)

// A SigV4 header as the SDK sends it (the signature is not checked).
func authz(key, service string) string {
	return "AWS4-HMAC-SHA256 Credential=" + key + "/20260101/us-east-1/" + service + "/aws4_request, SignedHeaders=host;x-amz-date, Signature=00"
}

func newFake(t *testing.T) *ebsfake.Server {
	t.Helper()
	f := ebsfake.New(ebsfake.Options{Accounts: map[string]string{"AKIDOTHER": "111122223333"}, Logf: t.Logf})
	f.Start()
	t.Cleanup(f.Close)
	return f
}

func post(t *testing.T, f *ebsfake.Server, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, f.URL()+"/", strings.NewReader(body))
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func ec2(t *testing.T, f *ebsfake.Server, key, form string) (int, string) {
	t.Helper()
	st, _, body := post(t, f, map[string]string{"Content-Type": "application/x-www-form-urlencoded; charset=utf-8", "Authorization": authz(key, "ec2")}, form)
	return st, body
}

// Success answers are in EC2's namespace with <requestId>; errors are a
// namespace-less <Response> with <RequestID>, as EC2 answers.
func TestEC2WireShapes(t *testing.T) {
	f := newFake(t)
	id := f.AddVolume("", ebsfake.Volume{Tags: map[string]string{"k": "v"}, Instances: []string{"i-0123456789abcdef0"}})

	st, body := ec2(t, f, "AKIDEXAMPLE", "Action=DescribeVolumes&Version=2016-11-15&MaxResults=5")
	for _, want := range []string{
		`<DescribeVolumesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">`, "<requestId>",
		"<volumeSet><item><volumeId>" + id + "</volumeId><size>8</size>", "<status>in-use</status>",
		"<createTime>2026-01-02T03:04:05.000Z</createTime>",
		"<attachmentSet><item><volumeId>" + id + "</volumeId><instanceId>i-0123456789abcdef0</instanceId><device>/dev/xvdb</device><status>attached</status>",
		"<tagSet><item><key>k</key><value>v</value></item></tagSet>", "<volumeType>gp3</volumeType>", "<multiAttachEnabled>false</multiAttachEnabled>",
	} {
		if st != 200 || !strings.Contains(body, want) {
			t.Errorf("DescribeVolumes %d lacks %q:\n%s", st, want, body)
		}
	}

	// More than 500 is pages of 500, as EC2's reference says.
	for range 600 {
		f.AddVolume("", ebsfake.Volume{})
	}
	st, body = ec2(t, f, "AKIDEXAMPLE", "Action=DescribeVolumes&Version=2016-11-15&MaxResults=1000")
	if n := strings.Count(body, "</volumeId><size>"); st != 200 || n != 500 || !strings.Contains(body, "<nextToken>") {
		t.Errorf("MaxResults 1000: %d, %d volumes", st, n)
	}

	for _, c := range []struct {
		key, form, code string
		status          int
	}{
		{"AKIDEXAMPLE", "Action=DescribeVolumes&Version=2016-11-15&MaxResults=4", "InvalidParameterValue", 400},
		{"AKIDEXAMPLE", "Action=DescribeVolumes", "MissingParameter", 400},
		{"AKIDEXAMPLE", "Action=DescribeVolumes&Version=2014-01-01", "NoSuchVersion", 400},
		{"AKIDEXAMPLE", "Action=DescribeVolumes&Version=2016-11-15&MaxResults=5&VolumeId.1=" + id, "InvalidParameterCombination", 400},
		{"AKIDEXAMPLE", "Action=DescribeVolumes&Version=2016-11-15&VolumeId.1=vol-0000000000000dead", "InvalidVolume.NotFound", 400},
		{"AKIDEXAMPLE", "Action=DeleteVolume&Version=2016-11-15&VolumeId=" + id, "VolumeInUse", 400},
		{"AKIDEXAMPLE", "Action=DeleteVolume&Version=2016-11-15&VolumeId=vol-x", "InvalidVolumeID.Malformed", 400},
		// Another account's access key does not see the volume.
		{"AKIDOTHER", "Action=DeleteVolume&Version=2016-11-15&VolumeId=" + id, "InvalidVolume.NotFound", 400},
	} {
		st, body := ec2(t, f, c.key, c.form)
		if st != c.status || !strings.HasPrefix(body, `<?xml version="1.0" encoding="UTF-8"?>`+"\n<Response><Errors><Error><Code>"+c.code+"</Code><Message>") ||
			!strings.Contains(body, "</Errors><RequestID>") || strings.Contains(body, "xmlns") {
			t.Errorf("%s: %d %s", c.form, st, body)
		}
	}

	st, _, body = post(t, f, map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Authorization": authz("AKIDEXAMPLE", "s3")}, "Action=DescribeVolumes&Version=2016-11-15")
	if st != 401 || !strings.Contains(body, "<Code>AuthFailure</Code>") {
		t.Errorf("signed for s3: %d %s", st, body)
	}

	f.FailNext(ebsfake.OpDeleteVolume, ebsfake.CodeUnauthorizedOperation, 1)
	if st, body := ec2(t, f, "AKIDEXAMPLE", "Action=DeleteVolume&Version=2016-11-15&VolumeId="+id); st != 403 || !strings.Contains(body, "ec2:DeleteVolume") {
		t.Errorf("injected UnauthorizedOperation: %d %s", st, body)
	}
	free := f.AddVolume("", ebsfake.Volume{})
	if st, body := ec2(t, f, "AKIDEXAMPLE", "Action=DeleteVolume&Version=2016-11-15&VolumeId="+free); st != 200 ||
		!strings.Contains(body, `<DeleteVolumeResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/"><requestId>`) || !strings.Contains(body, "<return>true</return>") {
		t.Errorf("DeleteVolume: %d %s", st, body)
	}
	snapForm := "Action=CreateSnapshot&Version=2016-11-15&VolumeId=" + id + "&Description=d&TagSpecification.1.ResourceType=snapshot&TagSpecification.1.Tag.1.Key=a&TagSpecification.1.Tag.1.Value=b"
	if st, body := ec2(t, f, "AKIDEXAMPLE", snapForm); st != 200 || !strings.Contains(body, "<status>pending</status>") || !strings.Contains(body, "<snapshotId>snap-") {
		t.Errorf("CreateSnapshot: %d %s", st, body)
	}
	if s := f.Snapshots(); len(s) != 1 || s[0].Tags["a"] != "b" || s[0].Account != ebsfake.DefaultAccount {
		t.Errorf("snapshots %+v", s)
	}
	if f.Calls(ebsfake.OpDeleteVolume) != 5 || f.MutatingCalls() != 6 {
		t.Errorf("calls %v, mutating %d", f.CallCounts(), f.MutatingCalls())
	}
}

// Service Quotas speaks awsJson1_1: X-Amz-Target, JSON in and out, errors
// as {"__type", "message"} with HTTP 400.
func TestQuotasWireShapes(t *testing.T) {
	f := newFake(t)
	f.SetQuota("", "L-7A658B76", "Storage for General Purpose SSD (gp3) volumes, in TiB", 50, "None")
	f.SetQuota("", "L-D18FCD1D", "Storage for General Purpose SSD (gp2) volumes, in TiB", 50, "None")
	h := map[string]string{"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "ServiceQuotasV20190624.ListServiceQuotas", "Authorization": authz("AKIDEXAMPLE", "servicequotas")}

	st, hdr, body := post(t, f, h, `{"ServiceCode":"ebs","MaxResults":1}`)
	var out struct {
		Quotas []struct {
			QuotaCode, QuotaName, Unit, ServiceCode string
			Value                                   float64
		}
		NextToken string
	}
	if err := json.Unmarshal([]byte(body), &out); st != 200 || err != nil || hdr.Get("Content-Type") != "application/x-amz-json-1.1" {
		t.Fatalf("%d %v %s", st, err, body)
	}
	if len(out.Quotas) != 1 || out.Quotas[0].QuotaCode != "L-7A658B76" || out.Quotas[0].Value != 50 || out.Quotas[0].ServiceCode != "ebs" || out.NextToken == "" {
		t.Fatalf("first page %+v", out)
	}
	if strings.ContainsAny(out.NextToken, "-_") {
		t.Errorf("NextToken %q is not standard base64", out.NextToken)
	}
	_, _, body = post(t, f, h, `{"ServiceCode":"ebs","MaxResults":1,"NextToken":"`+out.NextToken+`"}`)
	if !strings.Contains(body, "L-D18FCD1D") || strings.Contains(body, "NextToken") {
		t.Errorf("second page %s", body)
	}

	f.FailNext(ebsfake.OpListServiceQuotas, ebsfake.CodeAccessDenied, 1)
	st, _, body = post(t, f, h, `{"ServiceCode":"ebs"}`)
	var e map[string]string
	if err := json.Unmarshal([]byte(body), &e); st != 400 || err != nil || e["__type"] != "AccessDeniedException" || !strings.Contains(e["message"], "servicequotas:ListServiceQuotas") {
		t.Errorf("denied: %d %s", st, body)
	}
	if st, _, body := post(t, f, h, `{"ServiceCode":"ebs","MaxResults":101}`); st != 400 || !strings.Contains(body, "ValidationException") {
		t.Errorf("MaxResults 101: %d %s", st, body)
	}
	h["Authorization"] = authz("AKIDEXAMPLE", "ec2")
	if st, _, body := post(t, f, h, `{"ServiceCode":"ebs"}`); st != 400 || !strings.Contains(body, `"__type":"UnrecognizedClientException"`) {
		t.Errorf("signed for ec2: %d %s", st, body)
	}
	if n := f.Calls(ebsfake.OpListServiceQuotas); n != 5 || f.MutatingCalls() != 0 {
		t.Errorf("%d calls", n)
	}
}
