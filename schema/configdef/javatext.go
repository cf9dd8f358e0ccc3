package configdef

import (
	"strconv"
	"strings"

	"github.com/cdcd/cdcd/schema/javacompat"
)

// javaString renders a parsed value as Java's toString does, which is what
// Kafka puts in its messages and in ConfigInfos.
func javaString(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return x
	case Password:
		return Hidden
	case bool:
		return strconv.FormatBool(x)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return javacompat.FormatDouble(x, 64)
	case []string:
		return "[" + strings.Join(x, ", ") + "]"
	}
	return ""
}
