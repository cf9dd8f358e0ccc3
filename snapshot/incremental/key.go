package incremental

import (
	"fmt"
	"strings"

	"github.com/cdcd/cdcd/schema"
)

// KeyText is an event key's identity in a window (Row.KeyText): its values with their Go types, so that a
// streamed change's key matches the chunk row's of the same table, converted by the same reader.
func KeyText(k *schema.Struct) string {
	if k == nil {
		return ""
	}
	var b strings.Builder
	for _, v := range k.Values {
		if bs, ok := v.([]byte); ok {
			fmt.Fprintf(&b, "%x\x00", bs)
			continue
		}
		fmt.Fprintf(&b, "%T:%v\x00", v, v)
	}
	return b.String()
}
