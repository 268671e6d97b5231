// The event_id every v1 request carries: the key of the idempotency ledger.
import { z } from 'zod';

export const EventIdSchema = z
  .string()
  .min(1, 'must not be empty')
  .max(255, 'must be at most 255 characters')
  .meta({ description: 'Permanent identifier of this event; resend exactly the same value on retry.' });
