// Kept unmapped and invalid answers counted per key, and the indexes retention reads: the tables and
// indexes of SQLite migration 16.
export const answerKeepSchema = `
CREATE TABLE answers_kept (
  integration_id text COLLATE "C" NOT NULL,
  answer_key     text COLLATE "C" NOT NULL,
  answers        bigint NOT NULL,
  bytes          bigint NOT NULL,
  PRIMARY KEY (integration_id, answer_key)
);
CREATE TABLE answers_not_kept (
  integration_id text COLLATE "C" PRIMARY KEY,
  answers        bigint NOT NULL,
  last_at        text COLLATE "C" NOT NULL
);
INSERT INTO answers_kept (integration_id, answer_key, answers, bytes)
  SELECT integration_id, answer_key, count(*), sum(octet_length(answer_key) + octet_length(raw_value::text))
  FROM answers WHERE outcome IN ('unmapped', 'invalid') GROUP BY integration_id, answer_key;
CREATE INDEX answers_kept_age ON answers (created_at) WHERE outcome IN ('unmapped', 'invalid');
CREATE INDEX api_usage_hour ON api_usage (hour);
`;
