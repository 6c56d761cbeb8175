// reportError, shared by the examples: prints a failed call's gRPC code,
// ErrorInfo reason and RetryInfo delay, the way every llmrelay client should
// report a failure, and exits with status 1.

import { durationMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";

import { ErrorInfoSchema, RetryInfoSchema } from "../../gen/ts/google/rpc/error_details_pb.js";

// reportError prints a failed call's code, ErrorInfo reason and RetryInfo
// delay, and exits with status 1.
export function reportError(err: unknown): never {
  const e = ConnectError.from(err);
  const info = e.findDetails(ErrorInfoSchema)[0];
  console.error(`error: ${Code[e.code]} ${info?.reason ?? ""}: ${e.rawMessage}`);
  const retry = e.findDetails(RetryInfoSchema)[0];
  if (retry?.retryDelay) {
    console.error(`the server suggests calling again in ${durationMs(retry.retryDelay)}ms`);
  }
  process.exit(1);
}
