package admin_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	adminv1 "github.com/llmrelay/llmrelay/client/gen/llmrelay/admin/v1"
	"github.com/llmrelay/llmrelay/internal/admin"
	"github.com/llmrelay/llmrelay/internal/apikeys"
	"github.com/llmrelay/llmrelay/internal/spend"
	"github.com/llmrelay/llmrelay/internal/state"
	"github.com/llmrelay/llmrelay/internal/state/memory"
	"github.com/llmrelay/llmrelay/internal/state/statetest"
	"github.com/llmrelay/llmrelay/internal/usage"
)

// seed adds a usage record of each subject on each of days days from
// 2025-01-01, with counts, and returns the days' names.
func seed(t *testing.T, store *memory.Store, days int, subjects []string, counts map[string]int64) []string {
	t.Helper()
	first := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	var names []string
	for d := range days {
		day := first.AddDate(0, 0, d).Format(time.DateOnly)
		names = append(names, day)
		deltas := make([]state.UsageDelta, len(subjects))
		for i, sub := range subjects {
			deltas[i] = state.UsageDelta{Day: day, Subject: sub, Counts: counts}
		}
		if err := store.Settle(context.Background(), state.Settlement{ID: "call-" + day, Usage: deltas, Now: first}); err != nil {
			t.Fatal(err)
		}
	}
	return names
}

func newService(store *memory.Store) *admin.Service {
	clock := statetest.NewClock()
	return admin.New(apikeys.NewAdmin(apikeys.AdminDeps{Store: store, Now: clock.Now}),
		spend.New(store, nil, nil, spend.DefaultConfig(), clock.Now), clock.Now)
}

// wantEndDayRefused fails unless err is INVALID_ARGUMENT with a BadRequest
// naming end_day.
func wantEndDayRefused(t *testing.T, what string, resp *adminv1.GetUsageResponse, err error) {
	t.Helper()
	st, _ := status.FromError(err)
	var field string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok && len(br.GetFieldViolations()) > 0 {
			field = br.GetFieldViolations()[0].GetField()
		}
	}
	if st.Code() != codes.InvalidArgument || field != "end_day" {
		t.Fatalf("%s: %d records in %d bytes, %v (field %q); want INVALID_ARGUMENT naming end_day",
			what, len(resp.GetRecords()), proto.Size(resp), err, field)
	}
}

// TestGetUsageFitsAClientsReceiveLimit: GetUsage answers within gRPC's
// default limit on a received message (4 MiB), and refuses a range of days
// whose records would not fit, naming end_day. A year of 200 keys was
// answered with 5 MB, which every client with the default limit failed to
// receive (RESOURCE_EXHAUSTED), `llmrelay keys usage` included.
func TestGetUsageFitsAClientsReceiveLimit(t *testing.T) {
	ctx := context.Background()
	// 200 keys of the longest names, with counts past 2^32, about 134
	// bytes a record: 140 days fit in 4 MiB, 160 do not.
	counts := map[string]int64{spend.CountCalls: 1 << 40, spend.CountCost: 1 << 50}
	for _, k := range usage.Kinds {
		counts[k.Name] = 1 << 40
	}
	var keys []string
	for k := range 200 {
		keys = append(keys, fmt.Sprintf("k:%064d", k))
	}
	store := memory.New()
	days := seed(t, store, 160, keys, counts)
	svc := newService(store)

	resp, err := svc.GetUsage(ctx, &adminv1.GetUsageRequest{StartDay: days[0], EndDay: days[139]})
	if err != nil || len(resp.GetRecords()) != 140*200 || proto.Size(resp) >= 4<<20 {
		t.Fatalf("GetUsage of 140 days: %d records in %d bytes, %v; want %d records under 4 MiB", len(resp.GetRecords()), proto.Size(resp), err, 140*200)
	}
	resp, err = svc.GetUsage(ctx, &adminv1.GetUsageRequest{StartDay: days[0], EndDay: days[159]})
	wantEndDayRefused(t, "GetUsage of 160 days of 200 keys", resp, err)
	// One key's records of the same days are answered.
	resp, err = svc.GetUsage(ctx, &adminv1.GetUsageRequest{StartDay: days[0], EndDay: days[159], Key: fmt.Sprintf("%064d", 7)})
	if err != nil || len(resp.GetRecords()) != 160 {
		t.Fatalf("one key's usage: %d records, %v; want 160", len(resp.GetRecords()), err)
	}

	// Small records, but more than MaxUsageRecords of them: refused too,
	// and the store reads no more than one past the bound.
	store = memory.New()
	var many []string
	for k := range 250 {
		many = append(many, fmt.Sprint("k:", k))
	}
	days = seed(t, store, admin.MaxUsageRecords/250+1, many, map[string]int64{spend.CountCalls: 1})
	resp, err = newService(store).GetUsage(ctx, &adminv1.GetUsageRequest{StartDay: days[0], EndDay: days[len(days)-1]})
	wantEndDayRefused(t, fmt.Sprintf("GetUsage of %d records", len(days)*250), resp, err)
}

// TestGetUsageRangeOfDays: a year and a day (366 days) is answered; one
// day more is refused, and the refusal says the bound it holds to (it said
// "at most 365 days at once" of a range of 367, though 366 pass).
func TestGetUsageRangeOfDays(t *testing.T) {
	svc := newService(memory.New())
	if _, err := svc.GetUsage(context.Background(), &adminv1.GetUsageRequest{StartDay: "2025-11-29", EndDay: "2026-11-29"}); err != nil {
		t.Fatalf("GetUsage of 366 days: %v", err)
	}
	resp, err := svc.GetUsage(context.Background(), &adminv1.GetUsageRequest{StartDay: "2025-11-28", EndDay: "2026-11-29"})
	wantEndDayRefused(t, "GetUsage of 367 days", resp, err)
	if !strings.Contains(err.Error(), "is 366 days after start_day: at most 365 days after it, 366 days at once") {
		t.Fatalf("GetUsage of 367 days: %v; want the bound said as 365 days after start_day, 366 at once", err)
	}
}
