package engine

// SetTestAwaiting sets the function relay calls as an attempt starts
// waiting for its provider (nil: none), for the tests of engine_test.
func SetTestAwaiting(f func(holdsDelta bool)) { testAwaiting = f }

// SetTestStallStarted sets the function each attempt's stall is handed to
// as its timer starts (nil: none), for the tests of engine_test.
func SetTestStallStarted(f func(stall func())) { testStallStarted = f }
