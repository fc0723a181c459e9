#ifndef FORAGE_CCURL_SHIM_H
#define FORAGE_CCURL_SHIM_H
#include <curl/curl.h>

// curl_easy_setopt, curl_multi_setopt and curl_easy_getinfo are variadic,
// which Swift cannot call: one typed wrapper per argument kind.
static inline CURLcode forage_easy_setopt_long(CURL *h, CURLoption o, long v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode forage_easy_setopt_ptr(CURL *h, CURLoption o, const void *v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode forage_easy_setopt_off(CURL *h, CURLoption o, curl_off_t v) {
  return curl_easy_setopt(h, o, v);
}
static inline CURLcode forage_easy_setopt_write(CURL *h, CURLoption o,
    size_t (*f)(char *, size_t, size_t, void *)) {
  return curl_easy_setopt(h, o, f);
}
static inline CURLcode forage_easy_setopt_xferinfo(CURL *h, CURLoption o,
    int (*f)(void *, curl_off_t, curl_off_t, curl_off_t, curl_off_t)) {
  return curl_easy_setopt(h, o, f);
}
static inline CURLMcode forage_multi_setopt_long(CURLM *m, CURLMoption o, long v) {
  return curl_multi_setopt(m, o, v);
}
static inline CURLcode forage_easy_getinfo_long(CURL *h, CURLINFO i, long *v) {
  return curl_easy_getinfo(h, i, v);
}
static inline CURLcode forage_easy_getinfo_double(CURL *h, CURLINFO i, double *v) {
  return curl_easy_getinfo(h, i, v);
}
static inline CURLcode forage_easy_getinfo_off(CURL *h, CURLINFO i, curl_off_t *v) {
  return curl_easy_getinfo(h, i, v);
}
static inline CURLcode forage_easy_getinfo_ptr(CURL *h, CURLINFO i, void *v) {
  return curl_easy_getinfo(h, i, v);
}
#endif
