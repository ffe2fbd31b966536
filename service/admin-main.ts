import { parseArgs } from 'node:util';
import {
  ApiKeyInputError,
  createApiKey,
  listApiKeys,
  revokeApiKey,
  roleSchema,
  ROLES,
  type ApiKeyDb,
} from '../api/auth/api-keys';
import { createPrismaClient } from '../prisma/client';
import { loadConfig } from '../config/service-config';

// Offline API-key administration against the service's database:
//   node dist/service/admin-main.js create-key --name ana --role approver [--json]
//   node dist/service/admin-main.js list-keys [--json]
//   node dist/service/admin-main.js revoke-key --id <id>
// The key is printed once by create-key; only its sha256 is stored.

const USAGE = `usage:
  admin-main create-key --name <name> --role <${ROLES.join('|')}> [--json]
  admin-main list-keys [--json]
  admin-main revoke-key --id <key id>`;

export class UsageError extends Error {}

export interface AdminOutput {
  out(line: string): void;
  err(line: string): void;
}

/** Runs one admin command; returns the process exit code. */
export async function runAdminCommand(argv: readonly string[], prisma: ApiKeyDb, io: AdminOutput): Promise<number> {
  const [command, ...rest] = argv;
  try {
    const { values } = parseArgs({
      args: rest,
      options: {
        name: { type: 'string' },
        role: { type: 'string' },
        id: { type: 'string' },
        json: { type: 'boolean', default: false },
      },
      strict: true,
      allowPositionals: false,
    });
    switch (command) {
      case 'create-key': {
        if (!values.name) throw new UsageError('create-key needs --name');
        const role = roleSchema.safeParse(values.role);
        if (!role.success) throw new UsageError(`create-key needs --role ${ROLES.join('|')}`);
        const created = await createApiKey(prisma, { name: values.name, role: role.data });
        if (values.json) {
          io.out(JSON.stringify(created));
        } else {
          io.out(
            `Created API key ${created.id} (name ${created.name}, role ${created.role}, prefix ${created.prefix}).`,
          );
          io.out('The key is shown only now; store it safely:');
          io.out('');
          io.out(created.key);
        }
        return 0;
      }
      case 'list-keys': {
        const keys = await listApiKeys(prisma);
        if (values.json) {
          io.out(JSON.stringify(keys));
        } else if (keys.length === 0) {
          io.out('no API keys');
        } else {
          const iso = (d: Date | null) => d?.toISOString() ?? '-';
          const rows = [['ID', 'NAME', 'ROLE', 'PREFIX', 'CREATED', 'LAST USED', 'REVOKED']];
          for (const k of keys)
            rows.push([k.id, k.name, k.role, k.prefix, iso(k.createdAt), iso(k.lastUsedAt), iso(k.revokedAt)]);
          const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
          for (const r of rows)
            io.out(
              r
                .map((cell, i) => cell.padEnd(widths[i]!))
                .join('  ')
                .trimEnd(),
            );
        }
        return 0;
      }
      case 'revoke-key': {
        if (!values.id) throw new UsageError('revoke-key needs --id');
        const revoked = await revokeApiKey(prisma, values.id);
        if (!revoked) {
          io.err(`no API key with id ${values.id}`);
          return 1;
        }
        io.out(
          `Revoked API key ${revoked.id} (name ${revoked.name}, prefix ${revoked.prefix}) at ${revoked.revokedAt?.toISOString()}.`,
        );
        return 0;
      }
      default:
        throw new UsageError(command ? `unknown command ${command}` : 'no command given');
    }
  } catch (err) {
    // parseArgs throws TypeErrors with code ERR_PARSE_ARGS_* for unknown or malformed options.
    // (Checked by code, not `instanceof TypeError`: the error may come from another realm.)
    const parseError = String((err as { code?: unknown } | null)?.code).startsWith('ERR_PARSE_ARGS');
    if (err instanceof UsageError || err instanceof ApiKeyInputError || parseError) {
      io.err(`${(err as Error).message}\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const databaseUrl = loadConfig().databaseUrl;
  if (!databaseUrl) {
    console.error('DATABASE_URL must be set (the database the API uses).');
    process.exit(2);
  }
  const prisma = createPrismaClient(databaseUrl);
  try {
    process.exitCode = await runAdminCommand(process.argv.slice(2), prisma, {
      out: (line) => process.stdout.write(`${line}\n`),
      err: (line) => process.stderr.write(`${line}\n`),
    });
  } finally {
    await prisma.$disconnect();
  }
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error('admin command failed:', err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
