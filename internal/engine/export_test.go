package engine

// SetTestAwaiting sets the function relay calls as an attempt starts
// waiting for its provider (nil: none), for the tests of engine_test.
func SetTestAwaiting(f func(holdsDelta bool)) { testAwaiting = f }
