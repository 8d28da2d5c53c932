package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"
)

// writeStatusTable prints zkraft status as an aligned table, "-" for
// what a member did not tell.
func writeStatusTable(w io.Writer, statuses []*memberStatus) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ADDRESS\tMODE\tLEADER\tTERM\tZXID\tLAG\tCONNS\tSESSIONS\tZNODES\tLATENCY MIN/AVG/MAX\tHEALTH")
	for _, s := range statuses {
		if s.Mode == "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\t-\t-\tunhealthy: %s\n", s.Address, s.Error)
			continue
		}
		health := "healthy"
		if !s.Healthy {
			health = "unhealthy: " + s.Error
		}
		if s.AdminError != "" {
			health += " (" + s.AdminError + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%d/%s/%d\t%s\n",
			s.Address, s.Mode, dashIf(s.LeaderID < 0, strconv.FormatInt(s.LeaderID, 10)),
			dashIf(s.Term == 0, strconv.FormatUint(s.Term, 10)), s.Zxid,
			dashIf(s.Lag == nil, lagText(s.Lag)), s.Connections, sessionsText(s.Sessions), s.Znodes,
			s.LatencyMin, strconv.FormatFloat(s.LatencyAvg, 'f', -1, 64), s.LatencyMax, health)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

// writeStatusJSON prints zkraft status as one JSON array and nothing else.
func writeStatusJSON(w io.Writer, statuses []*memberStatus) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(statuses); err != nil {
		return fmt.Errorf("write status: %w", err)
	}
	return nil
}

func dashIf(unknown bool, s string) string {
	if unknown {
		return "-"
	}
	return s
}

func lagText(lag *int64) string {
	if lag == nil {
		return ""
	}
	return strconv.FormatInt(*lag, 10)
}

// sessionsText is the SESSIONS column: "-" when mntr did not answer.
func sessionsText(n *int64) string {
	if n == nil {
		return "-"
	}
	return strconv.FormatInt(*n, 10)
}
