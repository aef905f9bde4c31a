-- Each app's daily SMS budget in messages (docs/operations.md "SMS budgets"): past it the sign-in
-- sends that app no more codes until midnight in Korea, and its alerts fire at 80% and 100%. Set
-- by the operator (admin API `sms_daily_budget`, 1 to 10,000,000). NULL: SMS_APP_DAILY_BUDGET, the
-- default every app registered so far takes.
ALTER TABLE clients ADD COLUMN sms_daily_budget INTEGER;
