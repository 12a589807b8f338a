package harness

import (
	"os"
	"strconv"
	"strings"
)

// Load is the 1-, 5- and 15-minute load averages (/proc/loadavg; zeros elsewhere).
func Load() [3]float64 {
	var out [3]float64
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return out
	}
	f := strings.Fields(string(b))
	for i := 0; i < 3 && i < len(f); i++ {
		out[i], _ = strconv.ParseFloat(f[i], 64)
	}
	return out
}
