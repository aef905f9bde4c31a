// placeholder: the browser importer is being written (replaced by the real script)
export const IMPORT_JS = "";
