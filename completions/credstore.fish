function __credstore_should_offer_completions_for_flags_or_options -a expected_commands
    set -l non_repeating_flags_or_options $argv[2..]
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __credstore_parse_tokens
    test "$commands" = "$expected_commands"; and return $non_repeating_flags_or_options_absent
end

function __credstore_should_offer_completions_for_positional -a expected_commands positional_index_comparison expected_positional_index
    set -l non_repeating_flags_or_options
    set -l non_repeating_flags_or_options_absent 0
    set -l positional_index 0
    set -l commands
    __credstore_parse_tokens
    test "$commands" = "$expected_commands" -a \( "$positional_index" "$positional_index_comparison" "$expected_positional_index" \)
end

function __credstore_parse_tokens -S
    set -l unparsed_tokens (__credstore_tokens -pc)
    switch $unparsed_tokens[1]
    case 'credstore'
        __credstore_parse_subcommand 0 'version' 'h/help'
        switch $unparsed_tokens[1]
        case 'init'
            __credstore_parse_subcommand 0 'passphrase' 'force' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'add'
            __credstore_parse_subcommand 1 'realm=' 'method=' 'proxy=' 'user=' 'persistence=' 'default' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'get'
            __credstore_parse_subcommand 1 'realm=' 'method=' 'proxy=' 'user=' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'list'
            __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'remove'
            __credstore_parse_subcommand 1 'realm=' 'method=' 'proxy=' 'user=' 'synchronizable' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'default'
            __credstore_parse_subcommand 1 'realm=' 'method=' 'proxy=' 'user=' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'passwd'
            __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'rekey'
            __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'verify'
            __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'watch'
            __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'export'
            __credstore_parse_subcommand 1 'recipient=+' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'import'
            __credstore_parse_subcommand 1 'from=' 'dry-run' 'overwrite' 'persistence=' 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'device'
            __credstore_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'show'
                __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
            case 'list'
                __credstore_parse_subcommand 0 'store=' 'key-file=' 'json' 'version' 'h/help'
            case 'trust'
                __credstore_parse_subcommand 1 'store=' 'key-file=' 'json' 'version' 'h/help'
            case 'untrust'
                __credstore_parse_subcommand 1 'store=' 'key-file=' 'json' 'version' 'h/help'
            end
        case 'sync'
            __credstore_parse_subcommand 1 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'git-credential'
            __credstore_parse_subcommand 1 'store=' 'key-file=' 'json' 'version' 'h/help'
        case 'netrc'
            __credstore_parse_subcommand 0 'version' 'h/help'
            switch $unparsed_tokens[1]
            case 'import'
                __credstore_parse_subcommand 1 'store=' 'key-file=' 'json' 'version' 'h/help'
            case 'export'
                __credstore_parse_subcommand 1 'store=' 'key-file=' 'json' 'version' 'h/help'
            end
        case 'help'
            __credstore_parse_subcommand -r 1 'version'
        end
    end
end

function __credstore_tokens
    if test (string split -m 1 -f 1 -- . "$FISH_VERSION") -gt 3
        commandline --tokens-raw $argv
    else
        commandline -o $argv
    end
end

function __credstore_parse_subcommand -S -a positional_count
    argparse -s r -- $argv
    set -l option_specs $argv[2..]
    set -l is_repeating_positional $_flag_r
    set -el _flag_r
    set -a commands $unparsed_tokens[1]
    set positional_index 0
    while true
        set -e unparsed_tokens[1]
        argparse -sn "$commands" $option_specs -- $unparsed_tokens 2> /dev/null
        set unparsed_tokens $argv
        set positional_index (math $positional_index + 1)
        for non_repeating_flag_or_option in $non_repeating_flags_or_options
            if set -ql "_flag_$(string replace -a - _ -- $non_repeating_flag_or_option)"
                set non_repeating_flags_or_options_absent 1
                break
            end
        end
        test (count $unparsed_tokens) -eq 0 -o \( -z "$is_repeating_positional" -a "$positional_index" -gt "$positional_count" \) && break
    end
end

function __credstore_complete_directories
    set -l token (commandline -t)
    string match -- '*/' $token
    set -l subdirs $token*/
    printf %s\n $subdirs
end

function __credstore_custom_completion
    set -x SAP_SHELL fish
    set -x SAP_SHELL_VERSION $FISH_VERSION
    set -l tokens (__credstore_tokens -p)
    if test -z "$(__credstore_tokens -t)"
        set -l index (count (__credstore_tokens -pc))
        set tokens $tokens[..$index] \'\' $tokens[(math $index + 1)..]
    end
    command $tokens[1] $argv $tokens
end

complete -c 'credstore' -f
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'init' -d 'Create a store.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'add' -d 'Store a credential.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'get' -d 'Print the password for a URL.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'list' -d 'List every stored credential, without passwords.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'remove' -d 'Remove a credential.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'default' -d 'Make a stored user the default of its space.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'passwd' -d 'Change the store\'s passphrase.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'rekey' -d 'Rotate the store\'s root key.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'verify' -d 'Check that every credential decrypts and the database is sound.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'watch' -d 'Print each change to the store as it happens.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'export' -d 'Write the synchronizable credentials to an encrypted bundle file.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'import' -d 'Merge a bundle into the store, or bring in another store\'s file (--from).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'device' -d 'Show this store\'s device key, or list, trust or untrust other devices.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'sync' -d 'Merge the other devices\' bundles from a shared folder, then write this store\'s.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'git-credential' -d 'A git credential helper: git runs it with get, store or erase.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'netrc' -d 'Import a netrc file, or export the store\'s web credentials as one.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore" -eq 1' -fa 'help' -d 'Show subcommand help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" passphrase' -l 'passphrase' -d 'Lock the store with a passphrase rather than a key file.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" force' -l 'force' -d 'Accept the store now at the path as this path\'s store, when it replaced another on purpose.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore init" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" realm' -l 'realm' -d 'The realm the server names in its challenge; compared exactly.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" method' -l 'method' -d 'The authentication method; `any` (the default) answers Basic and Digest.' -rfka 'basic digest ntlm negotiate form any'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" proxy' -l 'proxy' -d 'A proxy space of this type rather than a server space: the URL gives the proxy\'s host and port.' -rfka 'http https socks'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" user' -l 'user' -d 'The user name.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" persistence' -l 'persistence' -d 'Where the credential is kept: permanent (this machine) or synchronizable (also exported).' -rfka 'permanent synchronizable'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" default' -l 'default' -d 'Make this credential the default of its space.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore add" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" realm' -l 'realm' -d 'The realm the server names in its challenge; compared exactly.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" method' -l 'method' -d 'The authentication method; `any` (the default) answers Basic and Digest.' -rfka 'basic digest ntlm negotiate form any'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" proxy' -l 'proxy' -d 'A proxy space of this type rather than a server space: the URL gives the proxy\'s host and port.' -rfka 'http https socks'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" user' -l 'user' -d 'The user whose credential to print (default: the space\'s default credential).' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore get" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore list" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore list" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore list" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore list" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" realm' -l 'realm' -d 'The realm the server names in its challenge; compared exactly.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" method' -l 'method' -d 'The authentication method; `any` (the default) answers Basic and Digest.' -rfka 'basic digest ntlm negotiate form any'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" proxy' -l 'proxy' -d 'A proxy space of this type rather than a server space: the URL gives the proxy\'s host and port.' -rfka 'http https socks'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" user' -l 'user' -d 'The user whose credential to remove.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" synchronizable' -l 'synchronizable' -d 'Confirm the removal of a synchronizable credential, on every synced machine.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore remove" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" realm' -l 'realm' -d 'The realm the server names in its challenge; compared exactly.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" method' -l 'method' -d 'The authentication method; `any` (the default) answers Basic and Digest.' -rfka 'basic digest ntlm negotiate form any'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" proxy' -l 'proxy' -d 'A proxy space of this type rather than a server space: the URL gives the proxy\'s host and port.' -rfka 'http https socks'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" user' -l 'user' -d 'The user to make the default.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore default" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore passwd" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore passwd" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore passwd" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore passwd" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore passwd" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore rekey" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore rekey" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore rekey" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore rekey" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore rekey" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore verify" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore verify" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore verify" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore verify" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore verify" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore watch" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore watch" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore watch" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore watch" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore watch" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore export" -eq 1' -F
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore export"' -l 'recipient' -d 'A device key (csdev1:…) that may open the bundle.' -rfka ''
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore export" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore export" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore export" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore export" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore import" -eq 1' -F
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" from' -l 'from' -d 'Read FILE as another store\'s: git-credentials, keepassxc, bitwarden or chrome.' -rfka 'git-credentials keepassxc bitwarden chrome'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" dry-run' -l 'dry-run' -d 'Report what would change, and change nothing.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" overwrite' -l 'overwrite' -d 'With --from: replace the password the store holds for a site and user when the file has another.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" persistence' -l 'persistence' -d 'With --from: the tier of the imported credentials (permanent, the default, or synchronizable).' -rfka 'permanent synchronizable'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore device" -eq 1' -fa 'show' -d 'Print this store\'s device id and public key (give the key to your other machines).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore device" -eq 1' -fa 'list' -d 'List the devices this store trusts: key, when trusted, when a bundle of theirs was last merged.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore device" -eq 1' -fa 'trust' -d 'Accept signed bundles from the device with this key.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore device" -eq 1' -fa 'untrust' -d 'Stop trusting a device: refuse its bundles, and seal no later bundle to it.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device show" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device show" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device show" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device show" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device show" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device list" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device list" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device list" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device list" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device list" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device trust" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device trust" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device trust" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device trust" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device trust" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device untrust" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device untrust" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device untrust" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device untrust" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore device untrust" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore sync" -eq 1' -fa '(__credstore_complete_directories)'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore sync" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore sync" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore sync" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore sync" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore sync" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore git-credential" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore git-credential" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore git-credential" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore git-credential" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore git-credential" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore netrc" -eq 1' -fa 'import' -d 'Store each machine\'s login and password as a permanent https credential.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore netrc" -eq 1' -fa 'export' -d 'Write the default http and https credentials as a netrc file (0600).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore netrc import" -eq 1' -F
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc import" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc import" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc import" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc import" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc import" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_positional "credstore netrc export" -eq 1' -F
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc export" store' -l 'store' -d 'The store\'s database file (env CREDSTORE_STORE; default $XDG_DATA_HOME/credstore/credentials.db).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc export" key-file' -l 'key-file' -d 'The key file that unlocks the store (env CREDSTORE_KEY_FILE; default store.key beside the store).' -rF
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc export" json' -l 'json' -d 'Print JSON, for scripts (schemas in docs/cli.md).'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc export" version' -l 'version' -d 'Show the version.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore netrc export" h help' -s 'h' -l 'help' -d 'Show help information.'
complete -c 'credstore' -n '__credstore_should_offer_completions_for_flags_or_options "credstore help" version' -l 'version' -d 'Show the version.'
