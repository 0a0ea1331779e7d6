// The standard gRPC health service (grpc.health.v1.Health), for serve().
//
// Its .proto is not part of Parley's contract and no npm package ships it for protobuf-es v2,
// so its descriptor is written out here (the five declarations of grpc/health/v1/health.proto
// that Check needs) and turned into typed descriptors by protobuf-es at start-up. Watch is not
// served (UNIMPLEMENTED), which the health protocol lets clients read as "use Check".

import { create, createFileRegistry, type Message } from "@bufbuild/protobuf";
import type { GenMessage, GenService } from "@bufbuild/protobuf/codegenv2";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ConnectRouter } from "@connectrpc/connect";

/** Serving statuses of grpc.health.v1.HealthCheckResponse. */
export const HealthStatus = { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } as const;

const file = create(FileDescriptorProtoSchema, {
  name: "grpc/health/v1/health.proto",
  package: "grpc.health.v1",
  syntax: "proto3",
  messageType: [
    {
      name: "HealthCheckRequest",
      field: [{ name: "service", number: 1, type: FieldDescriptorProto_Type.STRING, label: FieldDescriptorProto_Label.OPTIONAL, jsonName: "service" }],
    },
    {
      name: "HealthCheckResponse",
      field: [
        {
          name: "status",
          number: 1,
          type: FieldDescriptorProto_Type.ENUM,
          typeName: ".grpc.health.v1.HealthCheckResponse.ServingStatus",
          label: FieldDescriptorProto_Label.OPTIONAL,
          jsonName: "status",
        },
      ],
      enumType: [
        {
          name: "ServingStatus",
          value: Object.entries(HealthStatus).map(([name, number]) => ({ name, number })),
        },
      ],
    },
  ],
  service: [
    {
      name: "Health",
      method: [
        { name: "Check", inputType: ".grpc.health.v1.HealthCheckRequest", outputType: ".grpc.health.v1.HealthCheckResponse" },
      ],
    },
  ],
});

const registry = createFileRegistry(file, () => undefined);

/** grpc.health.v1.HealthCheckRequest. */
export type HealthCheckRequest = Message<"grpc.health.v1.HealthCheckRequest"> & { service: string };
/** grpc.health.v1.HealthCheckResponse. */
export type HealthCheckResponse = Message<"grpc.health.v1.HealthCheckResponse"> & { status: number };

/** grpc.health.v1.Health, with its one method Check, typed as generated code would be. */
export const HealthService = registry.getService("grpc.health.v1.Health") as GenService<{
  check: { methodKind: "unary"; input: GenMessage<HealthCheckRequest>; output: GenMessage<HealthCheckResponse> };
}>;
const HealthCheckResponseSchema = registry.getMessage("grpc.health.v1.HealthCheckResponse") as GenMessage<HealthCheckResponse>;

/**
 * Adds grpc.health.v1.Health/Check to a router: SERVING for the server as a whole ("") and for
 * each of services, NOT_FOUND for any other name (as grpc-go's health server answers).
 */
export function addHealth(router: ConnectRouter, services: readonly string[]): void {
  const known = new Set(["", ...services]);
  router.service(HealthService, {
    check(req) {
      if (!known.has(req.service)) throw new ConnectError(`unknown service ${JSON.stringify(req.service)}`, Code.NotFound);
      return create(HealthCheckResponseSchema, { status: HealthStatus.SERVING });
    },
  });
}
