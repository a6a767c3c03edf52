# bash completion for streetgan: commands, subcommands, each command's options (read from the
# installed program's own --help, so they never fall behind it), presets, --device values and
# other fixed choices, files and folders. Installed by the .deb as
# /usr/share/bash-completion/completions/streetgan; from a checkout: source packaging/completion/streetgan.bash
# The program completed: the word typed (a leading ~/ expanded), or streetgan on PATH when that
# word is no program. Its output is cached per program and command for the shell's life (streetgan
# answers a command's --help without loading LibTorch, in about 10 ms; an older one took a second).
declare -gA _streetgan_help_cache 2>/dev/null || true

# Sets _streetgan_help_text to the --help of "$@" (a command and maybe a subcommand). In this
# shell, never in a subshell: the cache must outlive the call.
_streetgan_load_help() {
  local key="$_streetgan_program|$*"
  if [ -z "${_streetgan_help_cache[$key]+set}" ]; then
    _streetgan_help_cache[$key]="$("$_streetgan_program" "$@" --help 2>/dev/null)"
  fi
  _streetgan_help_text="${_streetgan_help_cache[$key]}"
}

_streetgan() {
  local cur prev
  cur="${COMP_WORDS[COMP_CWORD]}"
  prev=""
  ((COMP_CWORD > 0)) && prev="${COMP_WORDS[COMP_CWORD - 1]}"
  local _streetgan_program="${COMP_WORDS[0]}" _streetgan_help_text=""
  case "$_streetgan_program" in "~/"*) _streetgan_program="$HOME/${_streetgan_program#"~/"}" ;; esac
  if ! [ -x "$_streetgan_program" ] && ! command -v "$_streetgan_program" >/dev/null 2>&1; then
    _streetgan_program=streetgan
  fi
  COMPREPLY=()
  local commands="train sample info demo-data data cache walk directions project metrics nearest parzen tensorboard import export serve publish bench remote"
  if ((COMP_CWORD == 1)); then
    mapfile -t COMPREPLY < <(compgen -W "$commands --help --version" -- "$cur")
    return 0
  fi
  local command="${COMP_WORDS[1]}" subcommands=""
  # Only a command (and subcommand) of ours is asked for its --help: never a word that could act.
  case " $commands " in *" $command "*) ;; *) return 0 ;; esac
  case "$command" in
    data) subcommands="stats preview" ;;
    cache) subcommands="build info" ;;
    bench) subcommands="train data explore metrics allreduce" ;;
    remote) subcommands="launch follow status signal get" ;;
  esac
  local words=("$command")
  if [ -n "$subcommands" ]; then
    if ((COMP_CWORD == 2)); then
      mapfile -t COMPREPLY < <(compgen -W "$subcommands --help" -- "$cur")
      return 0
    fi
    case " $subcommands " in *" ${COMP_WORDS[2]} "*) ;; *) return 0 ;; esac
    words+=("${COMP_WORDS[2]}")
  fi
  # The value of the option before the cursor.
  local choices=""
  case "$prev" in
    --preset)  # the presets train --help names: "start from a preset: a, b or c"
      _streetgan_load_help train
      choices="$(printf '%s\n' "$_streetgan_help_text" | sed -n 's/.*start from a preset: \(.*\)$/\1/p' | sed 's/,/ /g; s/ or / /g')"
      ;;
    --device) choices="auto cpu cuda cuda:0 cuda:1 cuda:2 cuda:3 hpu" ;;
    --precision) choices="auto fp32 fp16 bf16" ;;
    --cuda-graphs) choices="on off" ;;
    --method) choices="sefa pca" ;;
    --mode) choices="slerp lerp" ;;
    --easing) choices="linear ease-in-out ease-in ease-out" ;;
    --format) if [ "${words[0]}" = export ]; then choices="pytorch onnx"; else choices="gif mp4 webm png npy json"; fi ;;
    --generator) choices="ema raw" ;;
    --batch) choices="dynamic" ;;
    --filter) choices="nearest lanczos" ;;
    --time-of-day) choices="all day night" ;;
    --events) choices="-" ;;
    --dataroot | --run-dir | --run | --out-dir | --samples | --valid | --test | --inputs)
      mapfile -t COMPREPLY < <(compgen -d -- "$cur")
      compopt -o filenames 2>/dev/null
      return 0
      ;;
    --preview) [ "${words[0]}" = publish ] || { mapfile -t COMPREPLY < <(compgen -f -- "$cur"); compopt -o filenames 2>/dev/null; return 0; } ;;
    --checkpoint | --out | --config | --cache | --walk | --direction | --save-walk | --features | --latents)
      mapfile -t COMPREPLY < <(compgen -f -- "$cur")
      compopt -o filenames 2>/dev/null
      return 0
      ;;
  esac
  if [ -n "$choices" ]; then
    mapfile -t COMPREPLY < <(compgen -W "$choices" -- "$cur")
    return 0
  fi
  if [[ "$cur" == -* ]]; then
    _streetgan_load_help "${words[@]}"
    local options
    options="$(printf '%s\n' "$_streetgan_help_text" | sed -n 's/^  \(-[-a-zA-Z0-9]*\).*/\1/p')"
    mapfile -t COMPREPLY < <(compgen -W "$options --help" -- "$cur")
    return 0
  fi
  # Anything else: a file or folder (photos for project, a run folder for remote, ...).
  mapfile -t COMPREPLY < <(compgen -f -- "$cur")
  compopt -o filenames 2>/dev/null
  return 0
}

complete -F _streetgan streetgan
