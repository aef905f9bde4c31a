-- What the consent page states for each app (docs/signin.md "Consent"; 개인정보 보호법 §17 ②): the
-- purpose of use and the retention period, registered by the operator. NULL: the neutral defaults.
ALTER TABLE clients ADD COLUMN purpose TEXT;
ALTER TABLE clients ADD COLUMN retention TEXT;
