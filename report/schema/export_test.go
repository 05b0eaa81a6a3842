package schema

// What the external tests (package schema_test, which share the fixtures
// with the other report packages) need of the unexported.
var (
	EncodeReport  = encodeReport
	NearestSample = nearestSample
)
